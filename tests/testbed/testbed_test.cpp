// The multi-NIC testbed (scripts/testbed.sh): the streamer in its own
// network namespace with 4 veth NICs, 8 display nodes in theirs, the
// reference wall's layout with small tiles. Traffic must leave through the
// NICs the config balances the tiles over, and every tile's frames must
// arrive checksum-exact. Skipped (with the reason) when not root or without
// network namespaces.
#include "tests/testbed/testbed_fixture.h"

namespace tilestream {
namespace {

using testing::Shell;

constexpr uint64_t kFrames = 8, kTicks = 50;

class TestbedTest : public testing::TestbedFixture {
 protected:
  // The testbed's wall, with a generous swap-sync deadline: these tests are
  // about what arrives where; under load on two cores a node's report
  // came after one frame interval and the tick was skipped.
  void SetUp() override { SetUpWall("testbed-5x3.toml", "[sync]\ndeadline_ms = 500", kFrames); }
};

TEST_F(TestbedTest, TilesLeaveThroughTheirNicsAndArriveChecksumExact) {
  StartReceivers();
  std::map<std::string, uint64_t> before;
  for (const Nic& nic : config_.nics) before[nic.name] = TxBytes(nic.name);
  const auto tx = Stream(kTicks);
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  const std::map<uint32_t, uint64_t> sent = SentFrames();
  StopReceivers(sent);

  // Per NIC: the bytes of the frames its tiles sent (the config routes 4,
  // 4, 4 and 3 tiles through them), within 5% (ARP and the control
  // connection ride along). The frames sent, not the ticks: a tick a tile
  // rank skipped on a loaded machine sends nothing.
  const double frame_bytes = config_.wall.tile.frame_bytes() * 1.01;
  for (uint32_t n = 0; n < config_.nics.size(); ++n) {
    uint64_t frames = 0;
    for (uint32_t t = 0; t < config_.routes.size(); ++t)
      if (config_.routes[t].nic == n) frames += sent.at(t);
    const double carried =
        static_cast<double>(TxBytes(config_.nics[n].name) - before[config_.nics[n].name]);
    EXPECT_NEAR(carried / (frames * frame_bytes), 1.0, 0.05)
        << config_.nics[n].name << " carried " << carried << " bytes for " << frames << " frames";
  }
  // Every tile: every frame sent, the store's frame of its tick, in order.
  ExpectEveryFrameChecksumExact(sent, kFrames);
  // Every tick shown but those some tile did not send in time: skipped,
  // missed (its frame not read by then) or late; at most their sum.
  const auto report = StreamerReport();
  uint64_t not_sent = 0;
  for (const auto& s : report["streams"])
    not_sent += s["skipped_ticks"].get<uint64_t>() + s["missed_frames"].get<uint64_t>() +
                s["late_frames"].get<uint64_t>();
  EXPECT_GE(report["sync"]["presented"].get<uint64_t>() + not_sent, kTicks)
      << "all 8 nodes in swap sync over the testbed: " << report["aggregate"].dump();
}

// The fault run: on the link of display node tile01 (tiles r0c0, r0c1), 1%
// of the packets are dropped as they arrive and 1% are sent twice by the
// switch (nftables: this kernel has no netem, and nft cannot delay, so no
// reordering here). Only tile01's tiles may report loss and duplicates,
// matching what nft counted; every tile keeps showing frames.
TEST_F(TestbedTest, LossAndDuplicatesOnOneLinkShowOnlyOnThatNodesTiles) {
  if (Shell("command -v nft", dir_).exit_code != 0) GTEST_SKIP() << "needs nftables (nft)";
  DropOnNodeLink("tile01", "numgen random mod 100 < 1");
  const auto twice = Shell(
      "ip netns exec ts-switch nft 'add table netdev fault; add chain netdev fault twice { type "
      "filter hook egress device \"node-01\" priority 0; }; add rule netdev fault twice udp "
      "dport 50000-50099 numgen random mod 100 < 1 counter dup to \"node-01\"'",
      dir_);
  ASSERT_EQ(twice.exit_code, 0) << twice.output;
  StartReceivers();
  // 150 ticks: ~1200 GSO sends to tile01, so nft hits some with certainty.
  // Without retransmission: nft would count retransmissions it dropped or
  // doubled too, which are not in the stream's sequence (recovery on the
  // testbed: retransmission_test.cpp).
  constexpr uint64_t kFaultTicks = 150;
  const auto tx = Stream(kFaultTicks, "--retransmission off");
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  StopReceivers();
  const double dropped = Dropped("tile01");
  const double doubled =
      CountedDatagrams(Shell("ip netns exec ts-switch nft list table netdev fault", dir_).output);
  ASSERT_GT(dropped, 0);
  ASSERT_GT(doubled, 0);
  uint64_t lost = 0, duplicate = 0;
  for (const DisplayNode& node : config_.nodes) {
    const nlohmann::json report = NodeReport(node.name);
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
