// The multi-NIC testbed (testbed/testbed.sh): the streamer in its own
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

}  // namespace
}  // namespace tilestream
