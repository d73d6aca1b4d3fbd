// The live tests' wall (issue 44, docs/live.md): a 2x2 wall on loopback
// whose display nodes are headless receivers writing frame logs (and, when
// asked, the pictures they showed last), a streamer with one live source
// `cam` described by an SDP file the test writes, and the source's sender
// (ffmpeg or GStreamer) started by the test. Asserted is what the wall
// controls, never how fast the machine is.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/net/udp_socket.h"
#include "common/receive/tile_receiver.h"
#include "tests/support/built_paths.h"
#include "tests/support/frame_log.h"
#include "tests/support/receiver_path.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait_for.h"

namespace tilestream::testing {

inline bool Have(const std::string& program) {
  return std::system(("command -v " + program + " >/dev/null 2>&1").c_str()) == 0;
}

inline std::string Hex(uint64_t v) {
  char text[17];
  snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

// The checksum a receiver logs for a tile of all zeros.
inline std::string BlackTile(uint32_t width, uint32_t height) {
  const std::vector<std::byte> zeros(size_t{width} * height * 3);
  return Hex(FrameChecksum(zeros.data(), zeros.size()));
}

// `shown` is runs of `expected`, in that order, each at least once after
// the first `optional` (black, before the first picture, may be absent).
inline void ExpectRuns(const std::vector<std::string>& shown,
                       const std::vector<std::string>& expected, size_t optional = 1) {
  size_t at = 0;
  for (size_t e = 0; e < expected.size(); ++e) {
    const size_t begin = at;
    while (at < shown.size() && shown[at] == expected[e]) ++at;
    if (e >= optional) {
      EXPECT_GT(at, begin) << "no frame of run " << e << " (" << expected[e] << ") at frame " << at
                           << " of " << shown.size();
    }
  }
  std::string runs;  // what was shown, run by run, for the message
  for (size_t i = 0; i < shown.size(); ++i)
    if (i == 0 || shown[i] != shown[i - 1]) runs += " " + shown[i].substr(0, 6);
  EXPECT_EQ(at, shown.size()) << "frame " << at << " is none of the pictures sent; shown:" << runs;
}

// The wall's tiles and rate, and what the source sends.
struct LiveWallShape {
  uint32_t tile_width = 640, tile_height = 400;
  double fps = 30;
  uint32_t picture_width = 1280, picture_height = 800;
  std::string sampling = "RGB";  // as in the SDP
  int depth = 8;
  std::string extra_toml;       // appended to the config
  bool live_in_config = false;  // the config has [[live]] cam (extra_toml): no --live
};

// One fixture for every test of the suite (gtest's rule), in several
// files; each test sets up the wall it plays on first.
class LiveSource : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Have("ffmpeg")) GTEST_SKIP() << "no ffmpeg";
  }

  void SetUpWall(const LiveWallShape& shape) {
    shape_ = shape;
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
    std::ofstream(config_) << "[wall]\ncolumns = 2\nrows = 2\ntile_width = " << shape.tile_width
                           << "\ntile_height = " << shape.tile_height << "\nfps = " << shape.fps
                           << "\n[stream]\nmtu = 9000\n"
                              "[[node]]\nname = \"left\"\naddress = \"127.0.0.1\"\n"
                              "tiles = [\"r0c0\", \"r1c0\"]\nports = ["
                           << ports_[0] << ", " << ports_[2]
                           << "]\n[[node]]\nname = \"right\"\naddress = \"127.0.0.1\"\n"
                              "tiles = [\"r0c1\", \"r1c1\"]\nports = ["
                           << ports_[1] << ", "
                           << ports_[3]
                           // The loaded live tests' deadline: a receiver starved by the
                           // machine for 100 ms is not left out.
                           << "]\n[sync]\ndeadline_ms = 500\n"
                           << shape.extra_toml;
    // As ffmpeg's RTP muxer writes it for -pix_fmt rgb24.
    std::ofstream(dir_ / "cam.sdp")
        << "v=0\no=- 0 0 IN IP4 127.0.0.1\ns=No Name\nc=IN IP4 "
           "127.0.0.1\nt=0 0\nm=video "
        << ports_[4]
        << " RTP/AVP 96\na=rtpmap:96 raw/90000\n"
           "a=fmtp:96 sampling="
        << shape.sampling << "; width=" << shape.picture_width
        << "; height=" << shape.picture_height << "; depth=" << shape.depth << "\n";
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

  // A headless display node; `extra`: more of its options; `config`: the
  // wall's unless named.
  pid_t StartReceiver(const std::string& node, const std::string& extra = "",
                      const std::string& config = "") {
    const pid_t pid =
        Spawn(ReceiverPath() + " --config " + (config.empty() ? config_ : config) + " --node " +
              node + " --headless -q --frame-log " + (dir_ / (node + ".txt")) + " " + extra +
              " > " + (dir_ / (node + ".out")) + " 2>&1");
    EXPECT_TRUE(WaitFor([&] { return FileContains(dir_ / (node + ".out"), " <- ", 2); })) << node;
    return pid;
  }

  // The streamer with the live source and no movie: black until `load`.
  pid_t StartStreamer(uint64_t ticks, const std::string& extra = "") {
    const pid_t pid = Spawn(
        "timeout 120 " + MPIRUN_PATH + " -n 1 --oversubscribe " + STREAMER_PATH + " --config " +
        config_ + (shape_.live_in_config ? std::string() : " --live cam=" + (dir_ / "cam.sdp")) +
        " --ticks " + std::to_string(ticks) + " -q --json " + (dir_ / "streamer.json") + " " +
        extra + " > " + (dir_ / "streamer.out") + " 2>&1");
    EXPECT_TRUE(WaitFor([&] { return Status().is_object(); })) << FileText(dir_ / "streamer.out");
    return pid;
  }

  std::pair<int, std::string> Ctl(const std::string& command) {
    const auto r = Capture(WALLCTL_PATH + " --config " + config_ + " " + command);
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
  // The streamer's final report (once it ended).
  nlohmann::json Report() {
    std::ifstream in(dir_ / "streamer.json");
    return nlohmann::json::parse(in, nullptr, false);
  }

  // `seconds` of the picture at `path`, in real time, 30 a second, as RTP.
  std::string FfmpegCommand(const std::string& path, int seconds) {
    return "timeout 60 ffmpeg -hide_banner -loglevel error -re -loop 1 -framerate 30 -i " + path +
           " -t " + std::to_string(seconds) +
           " -pix_fmt rgb24 -c:v rawvideo -f rtp rtp://127.0.0.1:" + std::to_string(ports_[4]) +
           "?pkt_size=8972";
  }
  ProcessResult Ffmpeg(const std::string& path, int seconds) {
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
    EXPECT_EQ(Reap(pid), 0) << FileText(dir_ / (node + ".out"));
  }

  // Once the streamer ended by itself, the receivers stopped: per tile,
  // the checksums of the frames it showed, in the order shown.
  std::vector<std::vector<std::string>> EndAndCollect(pid_t streamer, pid_t left, pid_t right) {
    EXPECT_EQ(Reap(streamer), 0) << FileText(dir_ / "streamer.out");
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

  // Ticks that some tile never completed while another did (from the
  // nodes' frame logs): lost on a loaded machine's loopback, unrepaired.
  uint64_t TicksSomeTileMissed() {
    std::map<uint32_t, int> tiles_with;  // RTP timestamp -> tiles that completed it
    for (const std::string node : {"left", "right"})
      for (const auto& [tile, frames] : ReadFrameLog(dir_ / (node + ".txt")))
        for (const auto& [ts, sum] : frames) ++tiles_with[ts];
    return std::count_if(tiles_with.begin(), tiles_with.end(),
                         [](const auto& t) { return t.second < 4; });
  }

  TempDir dir_;
  LiveWallShape shape_;
  std::string config_;
  std::vector<uint16_t> ports_;
  std::vector<pid_t> started_;
};

}  // namespace tilestream::testing
