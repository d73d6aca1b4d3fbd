// Test fixture: a live 2x2 wall on loopback. `receiver --headless` serves
// two display nodes ("left", "right") of a synthetic 8-frame store that
// `mpirun streamer` plays at 25 fps; wallctl drives it, and the frame logs
// say what every tile received. Shared by the receiver's end-to-end tests.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/net/udp_socket.h"
#include "common/store/tile_store.h"
#include "tests/support/built_paths.h"
#include "tests/support/frame_log.h"
#include "tests/support/receiver_path.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"
#include "tests/support/udp_port.h"
#include "tests/support/wait_for.h"
#include "tools/wallcut/frame_source.h"
#include "tools/wallcut/movie_cutter.h"

namespace tilestream {

using testing::Shell;
using testing::TempDir;

constexpr uint64_t kFrames = 8, kTicks = 20;

class ReceiverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
    WallSettings wall;
    wall.layout = {2, 2};
    wall.tile = {160, 100};
    wall.fps = 25;
    auto source = MakeSyntheticSource(wall, kFrames, 9, true);
    CutOptions co;
    co.wall = wall;
    co.out_dir = dir_ / "movie";
    co.progress = false;
    ASSERT_TRUE(CutMovie(**source, co).ok());
    manifest_ = *OpenTileStore(dir_ / "movie");
    // Four free ports: bind all four, note, release. Two nodes of two tiles.
    // (Released one by one, the kernel handed the same port out twice.)
    std::vector<std::string>& ports = ports_;  // per tile index
    std::vector<UdpReceiver> held;
    for (int i = 0; i < 4; ++i) {
      UdpReceiverOptions o;
      o.bind_address = "127.0.0.1";
      auto r = UdpReceiver::Open(o);
      ASSERT_TRUE(r.ok());
      ports.push_back(std::to_string(r->port()));
      held.push_back(std::move(r).value());
    }
    held.clear();
    config_ = dir_ / "wall.toml";
    std::ofstream(config_)
        << "[wall]\ncolumns = 2\nrows = 2\ntile_width = 160\ntile_height = 100\nfps = 25\n"
           "[stream]\nmtu = 1500\n"
           "[[node]]\nname = \"left\"\naddress = \"127.0.0.1\"\ntiles = [\"r0c0\", \"r1c0\"]\n"
           "ports = ["
        << ports[0] << ", " << ports[2]
        << "]\n"
           "[[node]]\nname = \"right\"\naddress = \"127.0.0.1\"\ntiles = [\"r0c1\", \"r1c1\"]\n"
           "ports = ["
        << ports[1] << ", " << ports[3] << "]\n";
  }

  // Receivers run until stopped: none may outlive a failed test.
  void TearDown() override {
    for (pid_t pid : started_) {
      if (waitpid(pid, nullptr, WNOHANG) == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
      }
    }
  }

  // Starts `receiver --headless` for `node`; files are named after `tag`.
  pid_t StartReceiver(const std::string& node, const std::string& tag) {
    const pid_t pid = fork();
    if (pid == 0) {
      execl("/bin/sh", "sh", "-c",
            ("exec " + testing::ReceiverPath() + " --config " + config_ + " --node " + node +
             " --headless -q --json " + (dir_ / (tag + ".json")) + " --frame-log " +
             (dir_ / (tag + ".txt")) + " > " + (dir_ / (tag + ".out")) + " 2>&1")
                .c_str(),
            nullptr);
      _exit(127);
    }
    started_.push_back(pid);
    // Ready once it lists its two tiles: their sockets are open.
    EXPECT_TRUE(testing::WaitFor([&] {
      return testing::FileContains(dir_ / (tag + ".out"), " <- ", 2);
    })) << tag;
    return pid;
  }

  // Once it has read what arrived (a receiver under ASan on a loaded
  // machine was still behind when the stream ended), SIGTERM.
  void StopReceiver(pid_t pid) {
    testing::WaitFor([&] {
      for (const std::string& port : ports_)
        if (!testing::UdpQueueEmpty(static_cast<uint16_t>(std::stoi(port)))) return false;
      return true;
    });
    kill(pid, SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    started_.erase(std::remove(started_.begin(), started_.end(), pid), started_.end());
  }

  // `extra`: more of the streamer's flags.
  testing::ProcessResult Stream(uint64_t ticks, const std::string& extra = "") {
    return Shell("timeout 120 " + MPIRUN_PATH + " -n 1 --oversubscribe " + STREAMER_PATH +
                     " --config " + config_ + " --movie " + (dir_ / "movie") + " --ticks " +
                     std::to_string(ticks) + " -q --json " + (dir_ / "streamer.json") + " " + extra,
                 dir_);
  }

  // `wallctl COMMAND` against the streamer of this test: its exit code and
  // reply. popen, not Shell: it runs while Stream() runs.
  std::pair<int, std::string> Ctl(const std::string& command) {
    const auto r = testing::Capture(WALLCTL_PATH + " --config " + config_ + " " + command);
    return {r.exit_code, r.output};
  }

  // Frames the streamer sent for tile `name`, from its report: on a loaded
  // machine a tile rank skips a tick it is too late for, so what arrives is
  // judged against what was sent, not against the tick count.
  uint64_t SentFrames(const std::string& name) {
    const auto report = Report("streamer");  // the loop refers into it
    for (const auto& s : report["streams"])
      if (s["tile"] == name) return s["frames"].get<uint64_t>();
    return 0;
  }
  uint64_t TicksSkippedBySenders() {
    return Report("streamer")["aggregate"]["skipped_ticks"].get<uint64_t>();
  }

  // Waits (bounded) until the streamer of this test plays tick `tick`.
  bool WaitForTick(int64_t tick) {
    return testing::WaitFor([&] {
      const auto j = nlohmann::json::parse(Ctl("status").second, nullptr, false);
      return j.is_object() && j.value("tick", int64_t{-1}) >= tick;
    });
  }

  // The store's frame index of each checksum of tile `tile`.
  std::map<std::string, uint64_t> FrameOfChecksum(uint32_t tile) {
    std::map<std::string, uint64_t> m;
    for (uint64_t f = 0; f < kFrames; ++f) m[StoreChecksum(tile, f)] = f;
    return m;
  }

  // Per tile, the store frames it received, in order of arrival.
  std::map<uint32_t, std::vector<uint64_t>> FramesReceived(const std::string& tag) {
    std::map<uint32_t, std::vector<uint64_t>> out;
    for (const auto& [tile, frames] : FrameLog(tag)) {
      const auto which = FrameOfChecksum(tile);
      for (const auto& [ts, sum] : frames)
        out[tile].push_back(which.count(sum) ? which.at(sum) : 999);
    }
    return out;
  }

  nlohmann::json Report(const std::string& tag) {
    std::ifstream in(dir_ / (tag + ".json"));
    return nlohmann::json::parse(in);
  }

  std::map<uint32_t, std::map<uint32_t, std::string>> FrameLog(const std::string& tag) {
    return testing::ReadFrameLog(dir_ / (tag + ".txt"));
  }

  std::string StoreChecksum(uint32_t tile, uint64_t frame) {
    return testing::StoreFrameChecksum(manifest_, tile, frame);
  }

  TempDir dir_;
  MovieManifest manifest_;
  std::string config_;
  std::vector<std::string> ports_;
  std::vector<pid_t> started_;
};

}  // namespace tilestream
