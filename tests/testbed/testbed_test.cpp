// The multi-NIC testbed (scripts/testbed.sh): the streamer in its own
// network namespace with 4 veth NICs, 8 display nodes in theirs, the
// reference wall's layout with small tiles. Traffic must leave through the
// NICs the config balances the tiles over, and every tile's frames must
// arrive checksum-exact. Skipped (with the reason) when not root or without
// network namespaces.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/tile_store.h"
#include "common/wall_config.h"
#include "tests/support/frame_log.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"
#include "tools/frame_source.h"
#include "tools/movie_cutter.h"

namespace tilestream {
namespace {

using testing::Shell;

constexpr uint64_t kFrames = 8, kTicks = 50;
const std::string kSource = TILESTREAM_SOURCE_DIR;
const std::string kConfig = kSource + "/configs/testbed-5x3.toml";

class TestbedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (getuid() != 0) GTEST_SKIP() << "the testbed needs root (network namespaces)";
    const auto up = Shell(kSource + "/scripts/testbed.sh up", dir_);
    if (up.exit_code == 77) GTEST_SKIP() << up.output;
    ASSERT_EQ(up.exit_code, 0) << up.output;
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
    auto c = LoadWallConfig(kConfig);
    ASSERT_TRUE(c.ok()) << c.status().message();
    config_ = *c;
    auto source = MakeSyntheticSource(config_.wall, kFrames, 3, true);
    CutOptions co;
    co.wall = config_.wall;
    co.out_dir = dir_ / "movie";
    co.progress = false;
    ASSERT_TRUE(CutMovie(**source, co).ok());
    movie_ = *OpenTileStore(dir_ / "movie");
  }

  void TearDown() override {
    for (pid_t pid : receivers_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    Shell(kSource + "/scripts/testbed.sh down", dir_);
  }

  pid_t StartReceiver(const std::string& node) {
    const pid_t pid = fork();
    if (pid == 0) {
      execl("/bin/sh", "sh", "-c",
            ("exec ip netns exec ts-" + node + " " RECEIVER_PATH " --config " + kConfig + " --node " + node +
             " --headless -q --frame-log " + (dir_ / (node + ".txt")) + " > " + (dir_ / (node + ".out")) + " 2>&1")
                .c_str(),
            nullptr);
      _exit(127);
    }
    receivers_.push_back(pid);
    return pid;
  }

  uint64_t TxBytes(const std::string& nic) {
    const auto r = Shell("ip netns exec ts-server cat /sys/class/net/" + nic + "/statistics/tx_bytes", dir_);
    return std::stoull(r.output);
  }

  testing::TempDir dir_;
  WallConfig config_;
  MovieManifest movie_;
  std::vector<pid_t> receivers_;
};

TEST_F(TestbedTest, TilesLeaveThroughTheirNicsAndArriveChecksumExact) {
  for (const DisplayNode& n : config_.nodes) StartReceiver(n.name);
  sleep(1);
  std::map<std::string, uint64_t> before;
  for (const Nic& nic : config_.nics) before[nic.name] = TxBytes(nic.name);
  const auto tx = Shell("timeout 120 ip netns exec ts-server " MPIRUN_PATH " -n 1 --oversubscribe " STREAMER_PATH
                        " --config " + kConfig + " --movie " + (dir_ / "movie") + " --ticks " +
                            std::to_string(kTicks) + " -q --json " + (dir_ / "streamer.json"),
                        dir_);
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  for (pid_t pid : receivers_) kill(pid, SIGTERM);
  for (pid_t pid : receivers_) waitpid(pid, nullptr, 0);
  receivers_.clear();

  // Per NIC: the bytes of the tiles the config routes through it (4, 4, 4
  // and 3 tiles), within 5% (ARP and the control connection ride along).
  const double tile_bytes = kTicks * (config_.wall.tile.frame_bytes() * 1.01);
  for (uint32_t n = 0; n < config_.nics.size(); ++n) {
    uint32_t tiles = 0;
    for (const TileRoute& r : config_.routes) tiles += r.nic == n;
    const double sent = static_cast<double>(TxBytes(config_.nics[n].name) - before[config_.nics[n].name]);
    EXPECT_NEAR(sent / (tiles * tile_bytes), 1.0, 0.05) << config_.nics[n].name << " carried " << sent << " bytes for "
                                                        << tiles << " tiles";
  }
  // Every tile: every tick, the store's frame, in order.
  uint32_t tiles_seen = 0;
  for (const DisplayNode& node : config_.nodes) {
    for (const auto& [tile, frames] : testing::ReadFrameLog(dir_ / (node.name + ".txt"))) {
      ++tiles_seen;
      ASSERT_EQ(frames.size(), kTicks) << "tile " << tile;
      uint64_t tick = 0;
      for (const auto& [ts, sum] : frames) {
        EXPECT_EQ(sum, testing::StoreFrameChecksum(movie_, tile, tick % kFrames)) << "tile " << tile << " tick " << tick;
        ++tick;
      }
    }
  }
  EXPECT_EQ(tiles_seen, 15u);
  const auto report = nlohmann::json::parse(std::ifstream(dir_ / "streamer.json"));
  EXPECT_EQ(report["sync"]["presented"], kTicks) << "all 8 nodes in swap sync over the testbed";
}

}  // namespace
}  // namespace tilestream
