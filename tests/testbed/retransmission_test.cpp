// Recovering lost packets on the testbed (docs/receiver.md, "Recovering
// lost packets"): a 2x2 wall of 2560x1600 tiles (the reference tile size,
// 1,375 packets a frame) at 5 fps (testing::MemoryWallFixture says why),
// one tile per display node and per NIC, swap sync at its default
// deadline, frames from memory. nftables drops packets on the display
// nodes' links as they arrive. Root only.
#include "tests/testbed/testbed_fixture.h"

namespace tilestream {
namespace {

using testing::Shell;

class RetransmissionTest : public testing::MemoryWallFixture {};

// Loss the repairs recover (1% on one link, 0.1% on every link, a burst of
// 50) is the wall's simulation's now (sim/: reference-22fps-lost-1pct,
// rtt-*, burst-50-lan), and live, LongPath's 20 ms test over the delay
// line, which its simulated twin must agree with.

// 20% lost on tile r0c0's link: far more than the retransmission cap (5% of
// the stream) may answer. What the sender sends again stays within the cap
// (its bucket holds two frames' share, and may borrow as much again for a
// burst), and the other tiles, paced by the
// same rank (2 ranks: the coordinator and one streaming all four tiles,
// answering NACKs in the same loop), keep going: every frame they sent
// arrives whole. (Whether they stay on time under load is a benchmark's
// question: bench/receiver_bench.sh loss.)
TEST_F(RetransmissionTest, HeavyLossStaysUnderTheCapAndLeavesOtherTilesPaced) {
  DropOnNodeLink("tile01", "numgen random mod 100 < 20");
  constexpr uint64_t kCapTicks = 60;
  const auto sent = Play(kCapTicks, /*lossy=*/0, /*ranks=*/2);
  const double share = config_.stream.retransmission_share;
  const double frame_bytes = 1375 * 8960.0;
  const nlohmann::json report = StreamerReport();
  for (const auto& s : report["streams"]) {
    const auto tile = s["tile"].get<std::string>();
    if (tile != "r0c0") continue;
    const auto again = s["retransmitted_bytes"].get<double>();
    EXPECT_GT(s["refused_cap"].get<uint64_t>(), 0u) << s.dump();
    EXPECT_GT(again, 0);
    // The bucket's two frames' share, and as much again borrowed for a burst.
    EXPECT_LE(again, share * (s["bytes"].get<double>() - again) + 4 * share * frame_bytes)
        << s.dump();
    EXPECT_LE(s["borrowed"].get<uint64_t>(), s["retransmitted"].get<uint64_t>()) << s.dump();
  }
  for (const char* other : {"tile02", "tile03", "tile04"}) {
    const auto t = NodeReport(other)["tiles"][0];
    const uint32_t tile = config_.nodes[NodeIndex(other)].tiles[0].Index(config_.wall.layout);
    EXPECT_EQ(t["frames_complete"].get<uint64_t>(), sent.at(tile)) << t.dump();
    EXPECT_EQ(t["lost"], 0) << t.dump();
  }
}

}  // namespace
}  // namespace tilestream
