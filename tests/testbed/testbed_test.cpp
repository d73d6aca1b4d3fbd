// The multi-NIC testbed (scripts/testbed.sh): the streamer in its own
// network namespace with 4 veth NICs, 8 display nodes in theirs, the
// reference wall's layout with small tiles. Traffic must leave through the
// NICs the config balances the tiles over, and every tile's frames must
// arrive checksum-exact. Skipped (with the reason) when not root or without
// network namespaces.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "common/tile_store.h"
#include "common/wall_config.h"
#include "tests/support/frame_log.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait_for.h"
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
    // The testbed's wall, with a generous swap-sync deadline: these tests are
    // about what arrives where; under load on two cores a node's report
    // came after one frame interval and the tick was skipped.
    config_path_ = dir_ / "testbed.toml";
    std::ofstream(config_path_) << std::ifstream(kConfig).rdbuf()
                                << "\n[sync]\ndeadline_ms = 500\n";
    auto c = LoadWallConfig(config_path_);
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
            ("exec ip netns exec ts-" + node + " " RECEIVER_PATH " --config " + config_path_ +
             " --node " + node + " --headless -q --frame-log " + (dir_ / (node + ".txt")) +
             " --json " + (dir_ / (node + ".json")) + " > " + (dir_ / (node + ".out")) + " 2>&1")
                .c_str(),
            nullptr);
      _exit(127);
    }
    receivers_.push_back(pid);
    // Ready once it lists its tiles: their sockets are open (under ASan on
    // a loaded machine that took more than the second once waited here).
    const std::string out = dir_ / (node + ".out");
    const size_t tiles = config_.nodes[NodeIndex(node)].tiles.size();
    EXPECT_TRUE(testing::WaitFor([&] { return testing::FileContains(out, " <- ", tiles); }))
        << node;
    return pid;
  }

  size_t NodeIndex(const std::string& node) const {
    for (size_t n = 0; n < config_.nodes.size(); ++n)
      if (config_.nodes[n].name == node) return n;
    return 0;
  }

  // Streams `ticks` ticks of the movie through the testbed; the job's output.
  testing::ProcessResult Stream(uint64_t ticks = kTicks) {
    return Shell("timeout 120 ip netns exec ts-server " MPIRUN_PATH
                 " -n 1 --oversubscribe " STREAMER_PATH " --config " +
                     config_path_ + " --movie " + (dir_ / "movie") + " --ticks " +
                     std::to_string(ticks) + " -q --json " + (dir_ / "streamer.json"),
                 dir_);
  }

  // Frames the streamer sent per tile index, from its report (on a loaded
  // machine a tile rank skips a tick it is too late for).
  std::map<uint32_t, uint64_t> SentFrames() {
    std::map<uint32_t, uint64_t> sent;
    const auto report = nlohmann::json::parse(std::ifstream(dir_ / "streamer.json"));
    for (const auto& s : report["streams"]) {
      auto id = ParseTileName(s["tile"].get<std::string>(), config_.wall.layout);
      if (id.ok()) sent[id->Index(config_.wall.layout)] = s["frames"].get<uint64_t>();
    }
    return sent;
  }

  // With `sent`, first waits (bounded) until every tile logged the frames
  // sent to it: under ASan on a loaded machine a receiver was still reading
  // when the stream ended.
  void StopReceivers(const std::map<uint32_t, uint64_t>& sent = {}) {
    testing::WaitFor([&] {
      size_t tiles = 0;
      for (const DisplayNode& node : config_.nodes) {
        for (const auto& [tile, frames] : testing::ReadFrameLog(dir_ / (node.name + ".txt"))) {
          if (sent.count(tile) && frames.size() < sent.at(tile)) return false;
          ++tiles;
        }
      }
      return sent.empty() || tiles == config_.tile_count();
    });
    for (pid_t pid : receivers_) kill(pid, SIGTERM);
    for (pid_t pid : receivers_) waitpid(pid, nullptr, 0);
    receivers_.clear();
  }

  uint64_t TxBytes(const std::string& nic) {
    const auto r =
        Shell("ip netns exec ts-server cat /sys/class/net/" + nic + "/statistics/tx_bytes", dir_);
    return std::stoull(r.output);
  }

  testing::TempDir dir_;
  std::string config_path_;
  WallConfig config_;
  MovieManifest movie_;
  std::vector<pid_t> receivers_;
};

TEST_F(TestbedTest, TilesLeaveThroughTheirNicsAndArriveChecksumExact) {
  for (const DisplayNode& n : config_.nodes) StartReceiver(n.name);
  std::map<std::string, uint64_t> before;
  for (const Nic& nic : config_.nics) before[nic.name] = TxBytes(nic.name);
  const auto tx = Stream();
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  const std::map<uint32_t, uint64_t> sent = SentFrames();
  StopReceivers(sent);

  // Per NIC: the bytes of the tiles the config routes through it (4, 4, 4
  // and 3 tiles), within 5% (ARP and the control connection ride along).
  const double tile_bytes = kTicks * (config_.wall.tile.frame_bytes() * 1.01);
  for (uint32_t n = 0; n < config_.nics.size(); ++n) {
    uint32_t tiles = 0;
    for (const TileRoute& r : config_.routes) tiles += r.nic == n;
    const double sent =
        static_cast<double>(TxBytes(config_.nics[n].name) - before[config_.nics[n].name]);
    EXPECT_NEAR(sent / (tiles * tile_bytes), 1.0, 0.05)
        << config_.nics[n].name << " carried " << sent << " bytes for " << tiles << " tiles";
  }
  // Every tile: every tick, the store's frame, in order.
  uint32_t tiles_seen = 0;
  for (const DisplayNode& node : config_.nodes) {
    for (const auto& [tile, frames] : testing::ReadFrameLog(dir_ / (node.name + ".txt"))) {
      ++tiles_seen;
      ASSERT_EQ(frames.size(), sent.at(tile)) << "tile " << tile << ": every frame sent";
      // The frame of each tick (from its timestamp; a tick a loaded sender
      // skipped leaves a gap) is the store's frame of that tick.
      const uint32_t base = frames.begin()->first;
      const auto ts_per_tick = static_cast<uint32_t>(std::lround(90000 / config_.wall.fps));
      for (const auto& [ts, sum] : frames) {
        const uint64_t tick = (ts - base) / ts_per_tick;
        EXPECT_EQ(sum, testing::StoreFrameChecksum(movie_, tile, tick % kFrames))
            << "tile " << tile << " tick " << tick;
      }
    }
  }
  EXPECT_EQ(tiles_seen, 15u);
  const auto report = nlohmann::json::parse(std::ifstream(dir_ / "streamer.json"));
  uint64_t sender_skips = 0;
  for (const auto& s : report["streams"])
    sender_skips = std::max(sender_skips, s["skipped_ticks"].get<uint64_t>());
  EXPECT_GE(report["sync"]["presented"].get<uint64_t>() + sender_skips, kTicks)
      << "all 8 nodes in swap sync over the testbed";
}

// The packets an nft counter saw, in datagrams: veth carries GSO
// super-packets whole, so one "packet" there is several datagrams of the
// tile's 8960-byte payload (plus 28 bytes of IP and UDP headers per skb).
double CountedDatagrams(const std::string& ruleset) {
  std::smatch m;
  if (!std::regex_search(ruleset, m, std::regex("counter packets ([0-9]+) bytes ([0-9]+)")))
    return -1;
  const double skbs = std::stod(m[1]), bytes = std::stod(m[2]);
  return (bytes - 28 * skbs) / 8960;
}

// The fault run: on the link of display node tile01 (tiles r0c0, r0c1), 1%
// of the packets are dropped as they arrive and 1% are sent twice by the
// switch (nftables: this kernel has no netem, and nft cannot delay, so no
// reordering here). Only tile01's tiles may report loss and duplicates,
// matching what nft counted; every tile keeps showing frames.
TEST_F(TestbedTest, LossAndDuplicatesOnOneLinkShowOnlyOnThatNodesTiles) {
  if (Shell("command -v nft", dir_).exit_code != 0) GTEST_SKIP() << "needs nftables (nft)";
  const auto rules = Shell(
      "ip netns exec ts-tile01 nft 'add table netdev fault; add chain netdev fault loss { type "
      "filter hook ingress "
      "device \"eth0\" priority 0; }; add rule netdev fault loss udp dport 50000-50099 numgen "
      "random mod 100 < 1 "
      "counter drop' && ip netns exec ts-switch nft 'add table netdev fault; add chain netdev "
      "fault twice { type filter "
      "hook egress device \"node-01\" priority 0; }; add rule netdev fault twice udp dport "
      "50000-50099 numgen random "
      "mod 100 < 1 counter dup to \"node-01\"'",
      dir_);
  ASSERT_EQ(rules.exit_code, 0) << rules.output;
  for (const DisplayNode& n : config_.nodes) StartReceiver(n.name);
  // 150 ticks: ~1200 GSO sends to tile01, so nft hits some with certainty.
  constexpr uint64_t kFaultTicks = 150;
  const auto tx = Stream(kFaultTicks);
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  StopReceivers();
  const double dropped =
      CountedDatagrams(Shell("ip netns exec ts-tile01 nft list table netdev fault", dir_).output);
  const double doubled =
      CountedDatagrams(Shell("ip netns exec ts-switch nft list table netdev fault", dir_).output);
  ASSERT_GT(dropped, 0);
  ASSERT_GT(doubled, 0);
  uint64_t lost = 0, duplicate = 0;
  for (const DisplayNode& node : config_.nodes) {
    const auto report = nlohmann::json::parse(std::ifstream(dir_ / (node.name + ".json")));
    for (const auto& t : report["tiles"]) {
      const std::string tile = t["tile"];
      // No tile stalls: the faulty link's tiles lose a frame per lost packet at most.
      EXPECT_GE(t["frames_complete"].get<uint64_t>(), kFaultTicks * 8 / 10) << tile;
      if (node.name == "tile01") {
        lost += t["lost"].get<uint64_t>();
        duplicate += t["duplicate"].get<uint64_t>();
      } else {
        EXPECT_EQ(t["lost"], 0) << tile << " is not on the faulty link";
        EXPECT_EQ(t["duplicate"], 0) << tile << " is not on the faulty link";
        EXPECT_EQ(t["frames_incomplete"], 0) << tile;
      }
    }
  }
  // A frame's last datagram is shorter than 8960 bytes, so the counters'
  // datagram estimate runs a little low.
  EXPECT_NEAR(lost / dropped, 1.0, 0.15) << lost << " lost, nft dropped ~" << dropped;
  EXPECT_NEAR(duplicate / doubled, 1.0, 0.15)
      << duplicate << " duplicates, nft sent ~" << doubled << " twice";
}

}  // namespace
}  // namespace tilestream
