// Live sources end to end (issue 44, docs/live.md): ffmpeg sends RTP
// (RFC 4175) to `streamer --live cam=SDP`, `wallctl load cam` switches the
// wall to it, and headless receivers' frame logs say what every tile
// showed. What the wall controls is asserted: every frame shown whole and
// exact, the source's pictures counted, the last picture held once the
// source stops; nothing about how fast the machine is.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/image/ppm.h"
#include "tests/streamer/live_fixture.h"
#include "tests/support/frame_log.h"
#include "tests/support/tcp_port.h"
#include "tools/wallcut/frame_source.h"
#include "tools/wallcut/movie_cutter.h"

namespace tilestream {
namespace {

using testing::BlackTile;
using testing::ExpectRuns;
using testing::Hex;
using testing::LiveSource;
using testing::LiveWallShape;

constexpr uint32_t kTileW = 640, kTileH = 400, kPictureW = 1280, kPictureH = 800;

// A picture of every pixel its own; its four quarters' checksums as a
// receiver logs them.
std::vector<std::string> WritePattern(const std::string& path) {
  std::vector<std::byte> rgb(size_t{kPictureW} * kPictureH * 3);
  for (uint32_t y = 0; y < kPictureH; ++y)
    for (uint32_t x = 0; x < kPictureW; ++x) {
      std::byte* p = &rgb[(size_t{y} * kPictureW + x) * 3];
      p[0] = std::byte(x * 7 + y * 3);
      p[1] = std::byte(x ^ y);
      p[2] = std::byte((x / 5) * (y / 3));
    }
  EXPECT_TRUE(WritePpm(path, kPictureW, kPictureH, rgb).ok());
  std::vector<std::string> quarters;
  std::vector<std::byte> tile(size_t{kTileW} * kTileH * 3);
  for (uint32_t t = 0; t < 4; ++t) {
    const uint32_t x0 = (t % 2) * kTileW, y0 = (t / 2) * kTileH;
    for (uint32_t y = 0; y < kTileH; ++y)
      std::copy_n(&rgb[((size_t{y0} + y) * kPictureW + x0) * 3], size_t{kTileW} * 3,
                  &tile[size_t{y} * kTileW * 3]);
    quarters.push_back(Hex(FrameChecksum(tile.data(), tile.size())));
  }
  return quarters;
}

// A picture of one colour, and the checksum of a tile of it: whatever the
// scale, a tile of it is that colour alone.
std::string WriteUniform(const std::string& path, uint32_t w, uint32_t h) {
  std::vector<std::byte> rgb(size_t{w} * h * 3);
  for (size_t i = 0; i < rgb.size(); i += 3) {
    rgb[i] = std::byte{40};
    rgb[i + 1] = std::byte{120};
    rgb[i + 2] = std::byte{200};
  }
  EXPECT_TRUE(WritePpm(path, w, h, rgb).ok());
  rgb.resize(size_t{kTileW} * kTileH * 3);
  return Hex(FrameChecksum(rgb.data(), rgb.size()));
}

// The 2x2 wall of 640x400 tiles, no bezels, plays ffmpeg's 1280x800 RGB
// from the start (--movie cam): each tile shows its quarter of the source
// pixel for pixel, and holds it once the source stops.
TEST_F(LiveSource, AnFfmpegSourceOfTheWallsSizeIsCutPixelForPixelOntoEveryTile) {
  ASSERT_NO_FATAL_FAILURE(SetUpWall({}));
  const std::vector<std::string> quarters = WritePattern(dir_ / "pattern.ppm");
  const pid_t left = StartReceiver("left"), right = StartReceiver("right");
  const pid_t streamer = StartStreamer(/*ticks=*/300, "--movie cam");  // as `load cam` at the start
  const auto listing = nlohmann::json::parse(Ctl("movies").second, nullptr, false);
  ASSERT_TRUE(listing.is_object()) << Ctl("movies").second;
  ASSERT_EQ(listing["movies"].size(), 1u);
  EXPECT_EQ(listing["movies"][0]["name"], "cam");
  EXPECT_EQ(listing["movies"][0]["size"], "1280x800");
  const auto sent = Ffmpeg(dir_ / "pattern.ppm", 3);
  ASSERT_EQ(sent.exit_code, 0) << sent.output;
  const nlohmann::json after = Live();
  ASSERT_TRUE(after.is_object());
  EXPECT_GE(after["pictures"].get<uint64_t>(), 10u) << after.dump();
  EXPECT_EQ(after["malformed"], 0) << after.dump();
  // Stopped: said so, and the tiles hold the last picture.
  EXPECT_TRUE(testing::WaitFor([&] { return Live().value("receiving", true) == false; }));
  const auto shown = EndAndCollect(streamer, left, right);
  for (uint32_t t = 0; t < 4; ++t) {
    SCOPED_TRACE("tile " + std::to_string(t));
    ExpectRuns(shown[t], {BlackTile(kTileW, kTileH), quarters[t]});
    EXPECT_GE(std::count(shown[t].begin(), shown[t].end(), quarters[t]), 60);  // held to the end
  }
}

// ffmpeg restarted at another size writes another SDP: the wall receives
// the stream as the new SDP says and scales it from its first picture.
TEST_F(LiveSource, ASourceThatChangesItsSizeIsScaledAgainFromItsNewSdp) {
  ASSERT_NO_FATAL_FAILURE(SetUpWall({}));
  const std::vector<std::string> quarters = WritePattern(dir_ / "pattern.ppm");
  const std::string uniform = WriteUniform(dir_ / "small.ppm", 640, 400);
  const pid_t left = StartReceiver("left"), right = StartReceiver("right");
  const pid_t streamer = StartStreamer(/*ticks=*/300);
  EXPECT_EQ(Ctl("load cam").first, 0);
  auto sent = Ffmpeg(dir_ / "pattern.ppm", 2);
  ASSERT_EQ(sent.exit_code, 0) << sent.output;
  std::string sdp = testing::FileText(dir_ / "cam.sdp");
  sdp.replace(sdp.find("width=1280; height=800"), 22, "width=640; height=400");
  std::ofstream(dir_ / "cam.sdp.new") << sdp;
  std::filesystem::rename(dir_ / "cam.sdp.new", dir_ / "cam.sdp");
  ASSERT_TRUE(testing::WaitFor([&] { return Live().value("size", "") == "640x400"; }))
      << Live().dump();
  sent = Ffmpeg(dir_ / "small.ppm", 2);
  ASSERT_EQ(sent.exit_code, 0) << sent.output;
  EXPECT_EQ(Live()["restarts"], 1);
  const auto shown = EndAndCollect(streamer, left, right);
  for (uint32_t t = 0; t < 4; ++t) {
    SCOPED_TRACE("tile " + std::to_string(t));
    ExpectRuns(shown[t], {BlackTile(kTileW, kTileH), quarters[t], uniform});
  }
}

// A source that stops: the last picture is held for hold_s, then the slate
// stands in ([library] slate: here of the wall's size, so each tile shows
// its quarter of it exactly), said by status and /metrics; the panel's
// card shows the newest picture. The source comes back: its picture again.
TEST_F(LiveSource, ASourceThatStopsIsHeldThenShowsTheSlateAndComesBack) {
  const uint16_t http = testing::FreeTcpPort();
  LiveWallShape shape;
  shape.extra_toml = "[http]\nport = " + std::to_string(http) + "\n[library]\nslate = \"" +
                     (dir_ / "slate.ppm") + "\"\n[[live]]\nname = \"cam\"\nsdp = \"" +
                     (dir_ / "cam.sdp") + "\"\nhold_s = 1\n";
  shape.live_in_config = true;
  ASSERT_NO_FATAL_FAILURE(SetUpWall(shape));
  const std::vector<std::string> quarters = WritePattern(dir_ / "pattern.ppm");
  const std::string slate = WriteUniform(dir_ / "slate.ppm", kPictureW, kPictureH);
  const pid_t left = StartReceiver("left"), right = StartReceiver("right");
  const pid_t streamer = StartStreamer(/*ticks=*/3000);  // stopped below
  EXPECT_EQ(Ctl("load cam").first, 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(http);
  const auto get = [&](const std::string& path) {
    return testing::Capture("curl -s -w '\\n%{http_code}' " + url + path).output;
  };
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const auto sent = Ffmpeg(dir_ / "pattern.ppm", 2);
    ASSERT_EQ(sent.exit_code, 0) << sent.output;
    EXPECT_FALSE(Live().value("slate", true)) << Live().dump();
    const std::string card = get("/api/movies/cam.png");  // the newest picture, small
    EXPECT_TRUE(card.starts_with("\x89PNG") && card.ends_with("\n200")) << card.substr(0, 80);
    ASSERT_TRUE(testing::WaitFor([&] { return Live().value("slate", false); })) << Live().dump();
    ASSERT_TRUE(testing::WaitFor([&] {  // every tile's newest frame is its part of the slate
      const auto frames = Shown();
      return std::all_of(frames.begin(), frames.end(),
                         [&](const auto& f) { return !f.empty() && f.back() == slate; });
    }));
    const nlohmann::json live = Live();
    EXPECT_FALSE(live["receiving"].get<bool>());
    EXPECT_GE(live["silent_s"].get<double>(), 1.0) << live.dump();
    const std::string metrics = get("/metrics");
    EXPECT_THAT(metrics, ::testing::HasSubstr("tilestream_live_slate{source=\"cam\"} 1"));
    EXPECT_THAT(metrics, ::testing::HasSubstr("tilestream_live_receiving{source=\"cam\"} 0"));
  }
  EXPECT_EQ(Ctl("stop").first, 0);
  const auto shown = EndAndCollect(streamer, left, right);
  for (uint32_t t = 0; t < 4; ++t) {
    SCOPED_TRACE("tile " + std::to_string(t));
    // Before the load, the idle wall's slate (the same picture); before the
    // first picture, black, then (a second on) the source's slate.
    ExpectRuns(shown[t],
               {slate, BlackTile(kTileW, kTileH), slate, quarters[t], slate, quarters[t], slate},
               /*optional=*/3);
  }
}

// A multicast source (ffmpeg sending to a group on loopback): the server
// joins the group on the interface its [[live]] names, and every tile shows
// its quarter exactly.
TEST_F(LiveSource, AMulticastSourceIsJoinedOnTheServersInterface) {
  LiveWallShape shape;
  shape.extra_toml =
      "[[live]]\nname = \"cam\"\nsdp = \"" + (dir_ / "cam.sdp") + "\"\ninterface = \"127.0.0.1\"\n";
  shape.live_in_config = true;
  ASSERT_NO_FATAL_FAILURE(SetUpWall(shape));
  const std::string group = "239.255.41." + std::to_string(1 + ports_[4] % 250);
  std::string sdp = testing::FileText(dir_ / "cam.sdp");
  sdp.replace(sdp.find("c=IN IP4 127.0.0.1"), 18, "c=IN IP4 " + group + "/1");
  std::ofstream(dir_ / "cam.sdp") << sdp;
  const std::vector<std::string> quarters = WritePattern(dir_ / "pattern.ppm");
  const pid_t left = StartReceiver("left"), right = StartReceiver("right");
  const pid_t streamer = StartStreamer(/*ticks=*/3000);  // stopped below
  EXPECT_EQ(Ctl("load cam").first, 0);
  const auto sent = testing::Shell(
      "timeout 60 ffmpeg -hide_banner -loglevel error -re -loop 1 -framerate 30 -i " +
          (dir_ / "pattern.ppm") + " -t 2 -pix_fmt rgb24 -c:v rawvideo -f rtp 'rtp://" + group +
          ":" + std::to_string(ports_[4]) + "?localaddr=127.0.0.1&ttl=1&pkt_size=8972'",
      dir_);
  ASSERT_EQ(sent.exit_code, 0) << sent.output;
  EXPECT_GE(Live().value("pictures", 0), 10) << Live().dump();
  EXPECT_EQ(Ctl("stop").first, 0);
  const auto shown = EndAndCollect(streamer, left, right);
  for (uint32_t t = 0; t < 4; ++t) {
    SCOPED_TRACE("tile " + std::to_string(t));
    ExpectRuns(shown[t], {BlackTile(kTileW, kTileH), quarters[t]});
  }
}

// A wall's geometry is checked before a frame is sent: a movie of the
// library cut for other tiles is listed as not fitting and refused, and a
// display node started for other tiles is refused at its join; each names
// both sizes, on the streamer's side (status, the listing, load's reply)
// and the node's (its log).
TEST_F(LiveSource, AMovieAndANodeOfAnotherGeometryAreRefusedNamingBothSizes) {
  ASSERT_NO_FATAL_FAILURE(SetUpWall({}));
  WallSettings small;
  small.layout = {2, 2};
  small.tile = {320, 200};
  small.fps = 30;
  auto source = MakeSyntheticSource(small, 2, 3, true);
  ASSERT_TRUE(source.ok());
  CutOptions co;
  co.wall = small;
  co.out_dir = dir_ / "library/small";
  co.progress = false;
  ASSERT_TRUE(CutMovie(**source, co).ok());
  std::string other = testing::FileText(config_);
  const std::string tiles = "tile_width = 640\ntile_height = 400";
  other.replace(other.find(tiles), tiles.size(), "tile_width = 320\ntile_height = 200");
  std::ofstream(dir_ / "small.toml") << other;
  const pid_t left = StartReceiver("left", "", dir_ / "small.toml");
  const pid_t right = StartReceiver("right");
  const pid_t streamer = StartStreamer(/*ticks=*/3000, "--library " + (dir_ / "library"));
  const std::string why = "cut for 2x2 tiles of 320x200; the wall is 2x2 tiles of 640x400";
  const auto listing = nlohmann::json::parse(Ctl("movies").second, nullptr, false);
  ASSERT_TRUE(listing.is_object());
  bool listed = false;
  for (const auto& m : listing["movies"])
    if (m["name"] == "small") {
      listed = true;
      EXPECT_FALSE(m["fits"].get<bool>());
      EXPECT_EQ(m.value("problem", ""), why);
    }
  EXPECT_TRUE(listed) << listing.dump();
  const auto [code, reply] = Ctl("load small");
  EXPECT_NE(code, 0);
  EXPECT_THAT(reply, ::testing::HasSubstr(why));
  const std::string refusal = "has tiles of 320x200, but the wall streams 640x400";
  EXPECT_TRUE(testing::WaitFor([&] {
    const nlohmann::json s = Status();
    return s.is_object() &&
           s["sync"]["refused"].value("left", "").find(refusal) != std::string::npos;
  })) << Status().dump();
  EXPECT_TRUE(testing::WaitFor([&] { return testing::FileContains(dir_ / "left.out", refusal); }))
      << testing::FileText(dir_ / "left.out");
  EXPECT_EQ(Status()["sync"]["refused"].count("right"), 0u);
  EXPECT_EQ(Ctl("stop").first, 0);
  EXPECT_EQ(Reap(streamer), 0) << testing::FileText(dir_ / "streamer.out");
  Stop(left, "left");
  Stop(right, "right");
}

// A movie of the library, the live source, the movie again: each switch
// at a tick boundary with no tick skipped that a sender did not let go by
// (a loaded machine's), and every frame shown one of the movie's or the
// source's quarter.
TEST_F(LiveSource, TheWallSwitchesFromAMovieToTheLiveSourceAndBackWithNoTickSkipped) {
  ASSERT_NO_FATAL_FAILURE(SetUpWall({}));
  const std::vector<std::string> quarters = WritePattern(dir_ / "pattern.ppm");
  WallSettings wall;
  wall.layout = {2, 2};
  wall.tile = {kTileW, kTileH};
  wall.fps = 30;
  constexpr uint64_t kMovieFrames = 8;
  auto source = MakeSyntheticSource(wall, kMovieFrames, 3, true);
  ASSERT_TRUE(source.ok());
  CutOptions co;
  co.wall = wall;
  co.out_dir = dir_ / "library/A";
  co.progress = false;
  ASSERT_TRUE(CutMovie(**source, co).ok());
  const MovieManifest movie = *OpenTileStore(dir_ / "library/A");
  const pid_t left = StartReceiver("left"), right = StartReceiver("right");
  const pid_t streamer =
      StartStreamer(/*ticks=*/360, "--library " + (dir_ / "library") + " --movie A");
  const pid_t ffmpeg =
      Spawn(FfmpegCommand(dir_ / "pattern.ppm", 6) + " > " + (dir_ / "ffmpeg.out") + " 2>&1");
  const auto playing = [&](const std::string& name) {
    return testing::WaitFor([&] {
      const nlohmann::json st = Status();
      return st.is_object() && st.value("movie", "") == name && !st.contains("loading");
    });
  };
  ASSERT_TRUE(testing::WaitFor([&] { return Live().value("pictures", 0) > 0; }));
  EXPECT_EQ(Ctl("load cam").first, 0);
  ASSERT_TRUE(playing("cam"));
  const int64_t switched = Status()["tick"].get<int64_t>();
  ASSERT_TRUE(testing::WaitFor([&] { return Status().value("tick", int64_t{0}) > switched + 30; }));
  EXPECT_EQ(Ctl("load A").first, 0);
  ASSERT_TRUE(playing("A"));
  const auto shown = EndAndCollect(streamer, left, right);
  Reap(ffmpeg);
  const nlohmann::json report = Report();
  EXPECT_LE(report["sync"]["skipped"].get<uint64_t>(),
            report["aggregate"]["skipped_ticks"].get<uint64_t>())
      << report["sync"].dump();
  for (uint32_t t = 0; t < 4; ++t) {
    SCOPED_TRACE("tile " + std::to_string(t));
    std::set<std::string> movie_frames;
    for (uint64_t f = 0; f < kMovieFrames; ++f)
      movie_frames.insert(testing::StoreFrameChecksum(movie, t, f));
    // The runs: the movie, the source's quarter, the movie.
    std::vector<int> runs;
    for (const std::string& sum : shown[t]) {
      const int kind = sum == quarters[t] ? 1 : movie_frames.count(sum) ? 0 : -1;
      ASSERT_NE(kind, -1) << "a frame that is neither the movie's nor the source's: " << sum;
      if (runs.empty() || runs.back() != kind) runs.push_back(kind);
    }
    EXPECT_EQ(runs, (std::vector<int>{0, 1, 0}));
  }
}

}  // namespace
}  // namespace tilestream
