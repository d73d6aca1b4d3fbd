// Live sources end to end (issue 44, docs/live.md): ffmpeg sends RTP
// (RFC 4175) to `streamer --live cam=SDP`, `wallctl load cam` switches the
// wall to it, and headless receivers' frame logs say what every tile
// showed. What the wall controls is asserted: every frame shown whole and
// exact, the source's pictures counted, the last picture held once the
// source stops; nothing about how fast the machine is.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "built_paths.h"
#include "common/image/ppm.h"
#include "common/net/udp_socket.h"
#include "common/receive/tile_receiver.h"
#include "tests/support/frame_log.h"
#include "tests/support/receiver_path.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait_for.h"
#include "tools/wallcut/frame_source.h"
#include "tools/wallcut/movie_cutter.h"

namespace tilestream {
namespace {

using testing::Shell;
using testing::TempDir;

constexpr uint32_t kTileW = 640, kTileH = 400, kPictureW = 1280, kPictureH = 800;

bool Have(const std::string& program) {
  return std::system(("command -v " + program + " >/dev/null 2>&1").c_str()) == 0;
}

std::string Hex(uint64_t v) {
  char text[17];
  snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

class LiveSource : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Have("ffmpeg")) GTEST_SKIP() << "no ffmpeg";
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    // Five free ports, held together so that none is handed out twice: the
    // four tiles' and the source's.
    std::vector<UdpReceiver> held;
    for (int i = 0; i < 5; ++i) {
      UdpReceiverOptions o;
      o.bind_address = "127.0.0.1";
      auto r = UdpReceiver::Open(o);
      ASSERT_TRUE(r.ok());
      ports_.push_back(r->port());
      held.push_back(std::move(r).value());
    }
    held.clear();
    config_ = dir_ / "wall.toml";
    std::ofstream(config_) << "[wall]\ncolumns = 2\nrows = 2\ntile_width = 640\ntile_height = "
                              "400\nfps = 30\n[stream]\nmtu = 9000\n"
                              "[[node]]\nname = \"left\"\naddress = \"127.0.0.1\"\n"
                              "tiles = [\"r0c0\", \"r1c0\"]\nports = ["
                           << ports_[0] << ", " << ports_[2]
                           << "]\n[[node]]\nname = \"right\"\naddress = \"127.0.0.1\"\n"
                              "tiles = [\"r0c1\", \"r1c1\"]\nports = ["
                           << ports_[1] << ", "
                           << ports_[3]
                           // The loaded live tests' deadline: a receiver starved by the
                           // machine for 100 ms is not left out.
                           << "]\n[sync]\ndeadline_ms = 500\n";
    // As ffmpeg's RTP muxer writes it for -pix_fmt rgb24.
    std::ofstream(dir_ / "cam.sdp") << "v=0\no=- 0 0 IN IP4 127.0.0.1\ns=No Name\nc=IN IP4 "
                                       "127.0.0.1\nt=0 0\nm=video "
                                    << ports_[4]
                                    << " RTP/AVP 96\na=rtpmap:96 raw/90000\n"
                                       "a=fmtp:96 sampling=RGB; width=1280; height=800; depth=8\n";
  }

  void TearDown() override {
    for (pid_t pid : started_) {
      if (waitpid(pid, nullptr, WNOHANG) == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
      }
    }
  }

  pid_t Spawn(const std::string& command) {
    const pid_t pid = fork();
    if (pid == 0) {
      execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), nullptr);
      _exit(127);
    }
    started_.push_back(pid);
    return pid;
  }

  pid_t StartReceiver(const std::string& node) {
    const pid_t pid = Spawn(testing::ReceiverPath() + " --config " + config_ + " --node " + node +
                            " --headless -q --frame-log " + (dir_ / (node + ".txt")) + " > " +
                            (dir_ / (node + ".out")) + " 2>&1");
    EXPECT_TRUE(testing::WaitFor([&] {
      return testing::FileContains(dir_ / (node + ".out"), " <- ", 2);
    })) << node;
    return pid;
  }

  // The streamer with the live source and no movie: black until `load`.
  pid_t StartStreamer(uint64_t ticks, const std::string& extra = "") {
    const pid_t pid = Spawn(
        "timeout 120 " MPIRUN_PATH " -n 1 --oversubscribe " STREAMER_PATH " --config " + config_ +
        " --live cam=" + (dir_ / "cam.sdp") + " --ticks " + std::to_string(ticks) + " -q --json " +
        (dir_ / "streamer.json") + " " + extra + " > " + (dir_ / "streamer.out") + " 2>&1");
    EXPECT_TRUE(testing::WaitFor([&] { return Status().is_object(); }))
        << testing::FileText(dir_ / "streamer.out");
    return pid;
  }

  std::pair<int, std::string> Ctl(const std::string& command) {
    const auto r = testing::Capture(WALLCTL_PATH " --config " + config_ + " " + command);
    return {r.exit_code, r.output};
  }
  nlohmann::json Status() {
    const auto [rc, out] = Ctl("status");
    auto j = nlohmann::json::parse(out, nullptr, false);
    return rc == 0 && j.is_object() && j.value("ok", false) ? j : nlohmann::json();
  }
  nlohmann::json Live() {
    const nlohmann::json s = Status();
    return s.contains("live") ? s["live"][0] : nlohmann::json();
  }

  // `seconds` of the picture at `path`, in real time, 30 a second, as RTP.
  std::string FfmpegCommand(const std::string& path, int seconds) {
    return "timeout 60 ffmpeg -hide_banner -loglevel error -re -loop 1 -framerate 30 -i " + path +
           " -t " + std::to_string(seconds) +
           " -pix_fmt rgb24 -c:v rawvideo -f rtp rtp://127.0.0.1:" + std::to_string(ports_[4]);
  }
  testing::ProcessResult Ffmpeg(const std::string& path, int seconds) {
    return Shell(FfmpegCommand(path, seconds), dir_);
  }

  // Waits for `pid` to exit; its exit code.
  static int Reap(pid_t pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  void Stop(pid_t pid, const std::string& node) {
    kill(pid, SIGTERM);
    EXPECT_EQ(Reap(pid), 0) << testing::FileText(dir_ / (node + ".out"));
  }

  // Once the streamer ended by itself, the receivers stopped: per tile,
  // the checksums of the frames it showed, in the order shown.
  std::vector<std::vector<std::string>> EndAndCollect(pid_t streamer, pid_t left, pid_t right) {
    EXPECT_EQ(Reap(streamer), 0) << testing::FileText(dir_ / "streamer.out");
    Stop(left, "left");
    Stop(right, "right");
    return Shown();
  }
  std::vector<std::vector<std::string>> Shown() {
    std::vector<std::vector<std::string>> out(4);
    for (const std::string node : {"left", "right"}) {
      std::ifstream log(dir_ / (node + ".txt"));
      uint32_t tile = 0, ts = 0;
      std::string sum;
      while (log >> tile >> ts >> sum)
        if (tile < 4) out[tile].push_back(sum);
    }
    return out;
  }

  TempDir dir_;
  std::string config_;
  std::vector<uint16_t> ports_;
  std::vector<pid_t> started_;
};

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

std::string BlackTile() {
  const std::vector<std::byte> zeros(size_t{kTileW} * kTileH * 3);
  return Hex(FrameChecksum(zeros.data(), zeros.size()));
}

// `shown` is runs of `expected`, in that order, each at least once after
// the first (black, before the first picture, may be absent).
void ExpectRuns(const std::vector<std::string>& shown, const std::vector<std::string>& expected) {
  size_t at = 0;
  for (size_t e = 0; e < expected.size(); ++e) {
    const size_t begin = at;
    while (at < shown.size() && shown[at] == expected[e]) ++at;
    if (e > 0) {
      EXPECT_GT(at, begin) << "no frame of run " << e << " (" << expected[e] << ") at frame " << at
                           << " of " << shown.size();
    }
  }
  EXPECT_EQ(at, shown.size()) << "frame " << at << " is none of the pictures sent";
}

// The 2x2 wall of 640x400 tiles, no bezels, plays ffmpeg's 1280x800 RGB:
// each tile shows its quarter of the source pixel for pixel, and holds it
// once the source stops.
TEST_F(LiveSource, AnFfmpegSourceOfTheWallsSizeIsCutPixelForPixelOntoEveryTile) {
  const std::vector<std::string> quarters = WritePattern(dir_ / "pattern.ppm");
  const pid_t left = StartReceiver("left"), right = StartReceiver("right");
  const pid_t streamer = StartStreamer(/*ticks=*/300);
  const auto listing = nlohmann::json::parse(Ctl("movies").second, nullptr, false);
  ASSERT_TRUE(listing.is_object()) << Ctl("movies").second;
  ASSERT_EQ(listing["movies"].size(), 1u);
  EXPECT_EQ(listing["movies"][0]["name"], "cam");
  EXPECT_EQ(listing["movies"][0]["size"], "1280x800");
  EXPECT_EQ(Ctl("load cam").first, 0);
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
    ExpectRuns(shown[t], {BlackTile(), quarters[t]});
    EXPECT_GE(std::count(shown[t].begin(), shown[t].end(), quarters[t]), 60);  // held to the end
  }
}

// ffmpeg restarted at another size writes another SDP: the wall receives
// the stream as the new SDP says and scales it from its first picture.
TEST_F(LiveSource, ASourceThatChangesItsSizeIsScaledAgainFromItsNewSdp) {
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
    ExpectRuns(shown[t], {BlackTile(), quarters[t], uniform});
  }
}

// A movie of the library, the live source, the movie again: each switch
// at a tick boundary with no tick skipped that a sender did not let go by
// (a loaded machine's), and every frame shown one of the movie's or the
// source's quarter.
TEST_F(LiveSource, TheWallSwitchesFromAMovieToTheLiveSourceAndBackWithNoTickSkipped) {
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
  std::ifstream in(dir_ / "streamer.json");
  const auto report = nlohmann::json::parse(in);
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
