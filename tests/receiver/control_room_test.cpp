// The control room against a live 2x2 wall (issue 17): the REST API changes
// what every tile shows, with the TCP channel's replies; bad requests get
// JSON errors while the wall plays on; the live picture is the frame's
// thumbnail; a real Prometheus scrapes the coordinator and the display
// nodes; and the panel works in a real browser.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <png.h>
#include <poll.h>
#include <sys/socket.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "common/image/thumbnail.h"
#include "common/net/line_channel.h"
#include "tests/receiver/live_wall.h"
#include "tests/support/built_paths.h"
#include "tests/support/promtool.h"
#include "tests/support/tcp_port.h"

namespace tilestream {
namespace {

using std::chrono::seconds;
using ::testing::HasSubstr;

constexpr int kHttpPort = 7480;  // the defaults of [http]
constexpr int kLeftMetricsPort = 7481, kRightMetricsPort = 7482;

class ControlRoomTest : public ReceiverTest {
 protected:
  ControlRoomTest() : http_("127.0.0.1", kHttpPort) {
    signal(SIGPIPE, SIG_IGN);  // the server closes on a body over the limit
    http_.set_read_timeout(seconds(10));
    http_.set_connection_timeout(seconds(5));
  }

  // Waits (bounded) until the coordinator's HTTP side answers.
  bool WaitForHttp() {
    return testing::WaitFor([&] {
      auto r = http_.Get("/api/status");
      return r && r->status == 200;
    });
  }

  httplib::Result Post(const std::string& path, const std::string& body = "") {
    return http_.Post(path, body, "application/json");
  }

  // Runs `command` with sh; killed at the end of the test if still running.
  pid_t StartProcess(const std::string& command) {
    const pid_t pid = fork();
    if (pid == 0) {
      execl("/bin/sh", "sh", "-c", command.c_str(), nullptr);
      _exit(127);
    }
    started_.push_back(pid);
    return pid;
  }

  // Writes `request` to the coordinator's HTTP port as it is and returns
  // what comes back until the server closes (or 10 s).
  static std::string RawRequest(const std::string& request) {
    auto fd = ConnectTcp("127.0.0.1", kHttpPort, 5000);
    if (!fd.ok()) return "no connection";
    (void)!send(fd->get(), request.data(), request.size(), MSG_NOSIGNAL);
    shutdown(fd->get(), SHUT_WR);
    std::string reply;
    char buffer[4096];
    for (;;) {
      pollfd p{fd->get(), POLLIN, 0};
      if (poll(&p, 1, 10'000) <= 0) break;
      const ssize_t n = recv(fd->get(), buffer, sizeof buffer, 0);
      if (n <= 0) break;
      reply.append(buffer, static_cast<size_t>(n));
    }
    return reply;
  }

  // A reply without its "tick" (two calls a moment apart differ only there).
  static std::string WithoutTick(const std::string& reply) {
    auto j = nlohmann::json::parse(reply, nullptr, false);
    if (j.is_object()) j.erase("tick");
    return j.dump();
  }

  // Store frame `frame` of tile `tile`, scaled down as a tile rank does.
  std::vector<std::byte> ExpectedThumbnail(uint32_t tile, uint64_t frame) {
    std::vector<std::byte> pixels(manifest_.frame_stride);
    auto reader = TileReader::Open(manifest_, tile, false);
    EXPECT_TRUE(reader.ok() && reader->ReadFrame(frame, pixels).ok());
    const ThumbnailSize size = ThumbnailOf(manifest_.tile.width, manifest_.tile.height);
    std::vector<std::byte> out(size.bytes());
    MakeThumbnail(pixels.data(), manifest_.tile.width, manifest_.tile.height, size, out.data());
    return out;
  }

  static std::vector<std::byte> DecodePng(const std::string& png) {
    png_image image{};
    image.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&image, png.data(), png.size())) return {};
    image.format = PNG_FORMAT_RGB;
    std::vector<std::byte> rgb(PNG_IMAGE_SIZE(image));
    if (!png_image_finish_read(&image, nullptr, rgb.data(), 0, nullptr)) return {};
    return rgb;
  }

  // Every tile's last three frames are `frame` (held while paused).
  void ExpectEveryTileEndsOn(uint64_t frame) {
    for (const std::string tag : {"left", "right"}) {
      for (const auto& [tile, frames] : FramesReceived(tag)) {
        ASSERT_GE(frames.size(), 10u) << "tile " << tile;
        for (size_t i = frames.size() - 3; i < frames.size(); ++i)
          EXPECT_EQ(frames[i], frame)
              << "tile " << tile << " frame " << i << " of " << frames.size();
      }
    }
  }

  // Whether every tile's frame log ends on `count` frames `frame`.
  bool EveryTileEndsOn(uint64_t frame, size_t count) {
    for (const std::string tag : {"left", "right"}) {
      const auto received = FramesReceived(tag);
      if (received.size() != 2) return false;
      for (const auto& [tile, frames] : received) {
        if (frames.size() < count) return false;
        for (size_t i = frames.size() - count; i < frames.size(); ++i)
          if (frames[i] != frame) return false;
      }
    }
    return true;
  }

  httplib::Client http_;
};

TEST_F(ControlRoomTest, RestCallsChangeWhatEveryTileShowsWithTheRepliesOfTheTcpChannel) {
  const pid_t left = StartReceiver("left", "left"), right = StartReceiver("right", "right");
  std::thread control([&] {
    ASSERT_TRUE(WaitForTick(50)) << "the wall never played";
    auto r = Post("/api/pause");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(WithoutTick(r->body), WithoutTick(Ctl("pause").second)) << "the same reply by TCP";
    r = Post("/api/seek", R"({"frame": 5})");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << r->body;
    EXPECT_THAT(r->body, HasSubstr("\"state\":\"paused\""));
    EXPECT_THAT(r->body, HasSubstr("\"frame\":5"));
    r = Post("/api/seek", R"({"frame": 100})");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400);
    EXPECT_EQ(r->body + "\n", Ctl("seek 100").second) << "the same error by TCP";
    // The live picture: tile r0c1's thumbnail becomes frame 5's.
    const std::vector<std::byte> want = ExpectedThumbnail(1, 5);
    EXPECT_TRUE(testing::WaitFor([&] {
      auto png = http_.Get("/api/tile/r0c1.png");
      return png && png->status == 200 && DecodePng(png->body) == want;
    })) << "the thumbnail never showed frame 5";
    auto wall = http_.Get("/api/wall.png");
    ASSERT_TRUE(wall);
    EXPECT_EQ(wall->get_header_value("Content-Type"), "image/png");
    EXPECT_FALSE(DecodePng(wall->body).empty());
    EXPECT_TRUE(testing::WaitFor([&] { return EveryTileEndsOn(5, 3); }));
    EXPECT_EQ(Post("/api/stop")->status, 200);
  });
  const auto tx = Stream(2500);  // until the stop
  control.join();
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  StopReceiver(left);
  StopReceiver(right);
  ExpectEveryTileEndsOn(5);
}

// Wrong methods, bad JSON, a huge body, invalid UTF-8, unknown paths, a
// missing body: each gets a JSON error, and no frame of the wall is missed.
TEST_F(ControlRoomTest, BadRequestsGetJsonErrorsAndTheWallPlaysOn) {
  const pid_t left = StartReceiver("left", "left"), right = StartReceiver("right", "right");
  std::thread hostile([&] {
    ASSERT_TRUE(WaitForHttp());
    const auto expect_error = [&](const httplib::Result& r, int status, const std::string& what) {
      ASSERT_TRUE(r) << what;
      EXPECT_EQ(r->status, status) << what << ": " << r->body;
      const auto j = nlohmann::json::parse(r->body, nullptr, false);
      EXPECT_TRUE(j.is_object() && j.value("ok", true) == false && j.contains("error"))
          << what << ": " << r->body;
    };
    expect_error(http_.Get("/api/pause"), 405, "GET of a command");
    expect_error(http_.Delete("/api/status"), 405, "DELETE");
    expect_error(Post("/api/seek", "{\"frame\": "), 400, "cut JSON");
    expect_error(Post("/api/seek", "{\"frame\": \"\xff\xfe\"}"), 400, "invalid UTF-8");
    expect_error(Post("/api/speed", "\xc3\x28"), 400, "invalid UTF-8 alone");
    // A client that sends a 1 MB body gets 413 before the server reads it
    // (and the connection closed: httplib's client, still writing, sees
    // only that, so this one is written by hand).
    const std::string reply =
        RawRequest("POST /api/seek HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n" +
                   std::string(65536, '{'));
    EXPECT_THAT(reply, HasSubstr("413"));
    EXPECT_THAT(reply, HasSubstr("{\"error\":\"request body too large\",\"ok\":false}"));
    expect_error(Post("/api/nope"), 404, "unknown path");
    expect_error(http_.Get("/api/tile/../../etc/passwd"), 404, "a path out");
    // A flood from one address: each answered with a JSON error, 400 for
    // what it asks, or 429 once it is over http.requests_per_second_per_address.
    int limited = 0;
    for (int i = 0; i < 200; ++i) {
      const auto r = Post("/api/seek", "[]");
      ASSERT_TRUE(r);
      limited += r->status == 429;
      expect_error(r, r->status == 429 ? 429 : 400, "a flood");
    }
    EXPECT_GT(limited, 0) << "200 requests at once, over the 50 a second allowed";
  });
  const auto tx = Stream(125);
  hostile.join();
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  StopReceiver(left);
  StopReceiver(right);
  EXPECT_EQ(Report("streamer")["sync"]["skipped"].get<uint64_t>(), TicksSkippedBySenders());
  for (const std::string tag : {"left", "right"}) {
    const auto report = Report(tag);
    for (const auto& t : report["tiles"])
      EXPECT_EQ(t["frames_complete"], SentFrames(t["tile"])) << t.dump();
  }
}

// The movie library (issue 36, its listing): every movie of the library
// with what it is and whether it fits this wall, by wallctl and by the REST
// API alike, while the wall plays.
TEST_F(ControlRoomTest, TheMovieLibraryIsListedByWallctlAndTheRestApi) {
  const std::filesystem::path library = dir_ / "library";
  std::filesystem::create_directories(library / "broken");
  std::filesystem::create_directory_symlink(dir_ / "movie", library / "playing");
  std::ofstream(library / "broken" / "movie.toml") << "[movie]\nframes = many\n";
  WallSettings wide;
  wide.layout = {3, 1};
  wide.tile = {160, 100};
  wide.fps = 25;
  CutOptions co;
  co.wall = wide;
  co.out_dir = library / "wide";
  co.progress = false;
  ASSERT_TRUE(CutMovie(**MakeSyntheticSource(wide, 3, 5, true), co).ok());
  const pid_t left = StartReceiver("left", "left"), right = StartReceiver("right", "right");
  nlohmann::json by_wallctl, by_rest;
  int wallctl_rc = -1, rest_status = 0;
  struct Got {
    int status = 0;
    std::string type, body;
  };
  std::map<std::string, Got> posters;
  std::thread calls([&] {
    ASSERT_TRUE(WaitForHttp());
    const auto [rc, out] = Ctl("movies");
    wallctl_rc = rc;
    by_wallctl = nlohmann::json::parse(out, nullptr, false);
    auto r = http_.Get("/api/movies");
    rest_status = r ? r->status : 0;
    if (r) by_rest = nlohmann::json::parse(r->body, nullptr, false);
    for (const char* path :
         {"playing.png", "wide.png", "playing", "broken.png", "nope.png", "..%2Fmovie.png"})
      if (auto got = http_.Get(std::string("/api/movies/") + path))
        posters[path] = {got->status, got->get_header_value("Content-Type"), got->body};
    Ctl("stop");
  });
  const auto tx = Stream(3000, "--library " + library.string());
  calls.join();
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  StopReceiver(left);
  StopReceiver(right);

  EXPECT_EQ(wallctl_rc, 0) << by_wallctl.dump();
  EXPECT_EQ(rest_status, 200);
  EXPECT_EQ(by_rest["movies"], by_wallctl["movies"]) << "one listing by either road";
  const nlohmann::json& movies = by_wallctl["movies"];
  ASSERT_EQ(movies.size(), 3u) << by_wallctl.dump();
  EXPECT_EQ(movies[0]["name"], "broken");
  EXPECT_EQ(movies[0]["fits"], false);
  EXPECT_EQ(movies[1]["name"], "playing");
  EXPECT_EQ(movies[1]["fits"], true) << movies[1].dump();
  EXPECT_EQ(movies[1]["layout"], "2x2");
  EXPECT_EQ(movies[1]["frames"], kFrames);
  EXPECT_EQ(movies[1]["bytes"], 4 * kFrames * manifest_.frame_stride);
  EXPECT_EQ(movies[2]["name"], "wide");
  EXPECT_EQ(movies[2]["fits"], false);
  EXPECT_THAT(movies[2]["problem"].get<std::string>(), HasSubstr("cut for 3x1 tiles of 160x100"));

  // The posters: the first frame as the wall it was cut for, each tile's
  // thumbnail at its place; any other path is a JSON 404.
  EXPECT_EQ(posters["playing.png"].status, 200);
  EXPECT_EQ(posters["playing.png"].type, "image/png");
  const std::vector<std::byte> poster = DecodePng(posters["playing.png"].body);
  const ThumbnailSize size = ThumbnailOf(manifest_.tile.width, manifest_.tile.height);
  ASSERT_EQ(poster.size(), 4 * size.bytes());
  const size_t row = size_t{size.width} * 3;
  for (uint32_t tile = 0; tile < 4; ++tile) {  // r0c0, r0c1, r1c0, r1c1
    const std::vector<std::byte> want = ExpectedThumbnail(tile, 0);
    for (uint32_t y = 0; y < size.height; ++y) {
      const size_t at = ((tile / 2 * size.height + y) * 2 * size.width + tile % 2 * size.width) * 3;
      ASSERT_TRUE(
          std::equal(want.begin() + y * row, want.begin() + (y + 1) * row, poster.begin() + at))
          << "tile " << tile << " row " << y;
    }
  }
  EXPECT_EQ(posters["wide.png"].status, 200) << "a movie that does not fit has its poster too";
  EXPECT_EQ(DecodePng(posters["wide.png"].body).size(), 3 * size.bytes());
  for (const char* path : {"playing", "broken.png", "nope.png", "..%2Fmovie.png"}) {
    EXPECT_EQ(posters[path].status, 404) << path << ": " << posters[path].body;
  }
}

// A remote listener (every address: it needs a token): every call but the
// panel's page needs it, by "Authorization: Bearer"; the display nodes'
// /metrics too.
TEST_F(ControlRoomTest, ARemoteListenerNeedsTheBearerTokenForEveryCall) {
  std::ofstream(dir_ / "token") << "correct horse battery staple\n";
  std::ofstream(config_, std::ios::app)
      << "[control]\ntoken_file = \"" << (dir_ / "token") << "\"\n[http]\nlisten = \"0.0.0.0\"\n";
  const pid_t left = StartReceiver("left", "left"), right = StartReceiver("right", "right");
  std::thread calls([&] {
    ASSERT_TRUE(testing::WaitFor([&] {
      auto r = http_.Get("/api/status");
      return r && r->status == 401;
    }));
    const httplib::Headers good{{"Authorization", "Bearer correct horse battery staple"}};
    const httplib::Headers bad{{"Authorization", "Bearer correct horse battery stapl"}};
    EXPECT_EQ(http_.Post("/api/pause", bad, "", "application/json")->status, 401);
    EXPECT_EQ(http_.Get("/metrics")->status, 401);
    EXPECT_EQ(http_.Get("/api/status", good)->status, 200);
    EXPECT_EQ(http_.Get("/")->status, 200) << "the page holds no data";
    httplib::Client node("127.0.0.1", kLeftMetricsPort);
    EXPECT_EQ(node.Get("/metrics")->status, 401);
    EXPECT_EQ(node.Get("/metrics", good)->status, 200);
    EXPECT_EQ(http_.Post("/api/stop", good, "", "application/json")->status, 200);
  });
  const auto tx = Stream(2500);
  calls.join();
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  StopReceiver(left);
  StopReceiver(right);
}

// Prometheus (Debian's, started here on loopback with its own config and
// data) scrapes the coordinator and both display nodes every second; its
// query API then has every tile's sent and received bytes.
TEST_F(ControlRoomTest, APrometheusServerScrapesTheCoordinatorAndTheDisplayNodes) {
  ASSERT_EQ(system("command -v prometheus >/dev/null"), 0)
      << "no prometheus: scripts/install-deps.sh";
  const uint16_t port = testing::FreeTcpPort();
  std::ofstream(dir_ / "prometheus.yml")
      << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n"
         "  - job_name: coordinator\n    static_configs:\n      - targets: ['127.0.0.1:"
      << kHttpPort
      << "']\n  - job_name: display\n    static_configs:\n      - targets: ['127.0.0.1:"
      << kLeftMetricsPort << "', '127.0.0.1:" << kRightMetricsPort << "']\n";
  const pid_t prometheus =
      StartProcess("exec prometheus --config.file=" + (dir_ / "prometheus.yml") +
                   " --storage.tsdb.path=" + (dir_ / "data") + " --web.listen-address=127.0.0.1:" +
                   std::to_string(port) + " > " + (dir_ / "prometheus.out") + " 2>&1");
  const pid_t left = StartReceiver("left", "left"), right = StartReceiver("right", "right");
  std::thread scrape([&] {
    ASSERT_TRUE(WaitForHttp());
    for (const int p : {kHttpPort, kLeftMetricsPort, kRightMetricsPort}) {
      auto r = httplib::Client("127.0.0.1", p).Get("/metrics");
      ASSERT_TRUE(r) << p;
      const auto checked = testing::PromtoolCheck(r->body);
      EXPECT_EQ(checked.exit_code, 0) << "port " << p << ": " << checked.output;
    }
    httplib::Client query("127.0.0.1", port);
    const auto series_up = [&](const std::string& metric) {
      auto r = query.Get("/api/v1/query?query=" + metric);
      if (!r || r->status != 200) return size_t{0};
      const auto j = nlohmann::json::parse(r->body, nullptr, false);
      size_t up = 0;
      if (j.is_object() && j.contains("data") && j["data"].contains("result"))
        for (const auto& s : j["data"]["result"])
          up += std::stod(s["value"][1].get<std::string>()) > 0;
      return up;
    };
    EXPECT_TRUE(testing::WaitFor([&] {
      return series_up("tilestream_tile_sent_bytes_total") == 4;
    })) << "every tile's sent bytes";
    EXPECT_TRUE(testing::WaitFor([&] {
      return series_up("tilestream_receiver_received_bytes_total") == 4;
    })) << "every tile's received bytes, from the two nodes";
    EXPECT_EQ(series_up("tilestream_wall_ticks_presented_total"), 1u);
    EXPECT_EQ(Post("/api/stop")->status, 200);
  });
  const auto tx = Stream(2500);
  scrape.join();
  kill(prometheus, SIGTERM);
  waitpid(prometheus, nullptr, 0);
  started_.erase(std::remove(started_.begin(), started_.end(), prometheus), started_.end());
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  StopReceiver(left);
  StopReceiver(right);
}

// The panel in headless Chromium (Selenium, tests/browser/panel_test.py):
// it shows the wall playing and its picture, Pause is clicked and the
// slider dragged; every tile then shows the frame the slider ended on. The
// screenshot is kept in the build directory.
TEST_F(ControlRoomTest, ThePanelInABrowserPausesAndScrubsEveryTile) {
  ASSERT_EQ(system("command -v chromedriver >/dev/null && /usr/bin/python3 -c 'import selenium'"),
            0)
      << "no chromium-driver or python3-selenium: scripts/install-deps.sh";
  const pid_t left = StartReceiver("left", "left"), right = StartReceiver("right", "right");
  nlohmann::json result;
  std::thread browser([&] {
    ASSERT_TRUE(WaitForHttp());
    const std::string command =
        "timeout 150 /usr/bin/python3 " + TILESTREAM_SOURCE_DIR +
        "/tests/browser/panel_test.py --url http://127.0.0.1:" + std::to_string(kHttpPort) +
        "/ --screenshot " + PANEL_SCREENSHOT;
    const auto run = Shell(command, dir_);
    EXPECT_EQ(run.exit_code, 0) << run.output;
    const size_t line = run.output.rfind("{\"frame\"");
    if (line != std::string::npos)
      result = nlohmann::json::parse(run.output.substr(line), nullptr, false);
    if (result.is_object() && result["frame"].is_number_unsigned()) {
      EXPECT_TRUE(testing::WaitFor([&] { return EveryTileEndsOn(result["frame"], 3); }));
    }
    EXPECT_EQ(Post("/api/stop")->status, 200);
  });
  const auto tx = Stream(5000);  // until the stop
  browser.join();
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  StopReceiver(left);
  StopReceiver(right);
  ASSERT_TRUE(result.is_object() && result["frame"].is_number_unsigned()) << result.dump();
  const uint64_t frame = result["frame"];
  EXPECT_GE(frame, 3u) << "the slider was dragged to 70% of 0.." << kFrames - 1;
  EXPECT_GT(result["lit"].get<double>(), 0.2) << "the live picture shows the tiles";
  EXPECT_GT(result["colours"].get<int>(), 100) << "the live picture is not blank";
  ExpectEveryTileEndsOn(frame);
}

// The library in the panel (issue 36): the browser loads movie B from its
// card; the panel then says B plays with its 30 frames, and once paused on
// frame 0 its live picture is B's poster, pixel for pixel; every tile ends
// on B's frame 0.
TEST_F(ControlRoomTest, ThePanelLoadsAMovieFromTheLibrary) {
  ASSERT_EQ(system("command -v chromedriver >/dev/null && /usr/bin/python3 -c 'import selenium'"),
            0)
      << "no chromium-driver or python3-selenium: scripts/install-deps.sh";
  const std::filesystem::path library = dir_ / "library";
  WallSettings wall;
  wall.layout = manifest_.layout;
  wall.tile = manifest_.tile;
  wall.fps = 25;
  CutOptions co;
  co.wall = wall;
  co.out_dir = library / "B";
  co.progress = false;
  ASSERT_TRUE(CutMovie(**MakeSyntheticSource(wall, 30, 4, true), co).ok());
  const MovieManifest b = *OpenTileStore(library / "B");
  const pid_t left = StartReceiver("left", "left"), right = StartReceiver("right", "right");
  nlohmann::json result;
  std::thread browser([&] {
    ASSERT_TRUE(WaitForHttp());
    const auto run = Shell("timeout 150 /usr/bin/python3 " + TILESTREAM_SOURCE_DIR +
                               "/tests/browser/library_test.py --movie B --frames 30 --url "
                               "http://127.0.0.1:" +
                               std::to_string(kHttpPort) + "/",
                           dir_);
    EXPECT_EQ(run.exit_code, 0) << run.output;
    const size_t line = run.output.rfind("{\"movie\"");
    if (line != std::string::npos)
      result = nlohmann::json::parse(run.output.substr(line), nullptr, false);
    // Every tile's last frame is B's frame 0.
    EXPECT_TRUE(testing::WaitFor([&] {
      for (const std::string tag : {"left", "right"})
        for (const auto& [tile, frames] : FrameLog(tag))
          if (frames.empty() ||
              std::prev(frames.end())->second != testing::StoreFrameChecksum(b, tile, 0))
            return false;
      return true;
    }));
    EXPECT_EQ(Post("/api/stop")->status, 200);
  });
  const auto tx = Stream(5000, "--library " + library.string());
  browser.join();
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  StopReceiver(left);
  StopReceiver(right);
  EXPECT_EQ(result["movie"], "B") << result.dump();
}

}  // namespace
}  // namespace tilestream
