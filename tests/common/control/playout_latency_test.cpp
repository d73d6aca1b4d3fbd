#include "common/control/playout_latency.h"

#include <gtest/gtest.h>

namespace tilestream {
namespace {

constexpr int64_t kMs = 1'000'000;

SyncSettings Settings(int32_t latency) {
  SyncSettings s;
  s.latency = latency;
  s.max_latency_ms = 400;
  return s;
}

TEST(PlayoutLatency, AFixedLatencyShowsThatLongAfterTheFrameAndDecidesAMarginBefore) {
  PlayoutLatency l(Settings(100), 40 * kMs);
  EXPECT_TRUE(l.timed());
  EXPECT_EQ(l.PresentAt(1000 * kMs), 1100 * kMs);
  EXPECT_EQ(l.DeadlineFor(1000 * kMs), 1095 * kMs);  // nothing measured: 5 ms of slack
  l.Update(20 * kMs, 2 * kMs);
  EXPECT_EQ(l.latency_ns(), 100 * kMs);  // fixed: the round trip does not move it
  EXPECT_EQ(l.margin_ns(), (10 + 4 + 5) * kMs);
  EXPECT_EQ(l.DeadlineFor(1000 * kMs), 1081 * kMs);
}

// A tick as the clock opens it: with a latency, decided by its deadline and
// shown at its moment; without, decided a frame interval (or deadline_ms)
// after its frame and shown as decided.
TEST(PlayoutLatency, ATicksMomentsWithAndWithoutALatency) {
  PlayoutLatency timed(Settings(100), 40 * kMs);
  const PlayoutLatency::TickMoments t = timed.MomentsFor(1000 * kMs);
  EXPECT_EQ(t.deadline_ns, timed.DeadlineFor(1000 * kMs));
  EXPECT_EQ(t.at_ns, 1100 * kMs);
  SyncSettings lan;  // no latency
  PlayoutLatency untimed(lan, 40 * kMs);
  EXPECT_EQ(untimed.MomentsFor(1000 * kMs).deadline_ns, 1040 * kMs);
  EXPECT_EQ(untimed.MomentsFor(1000 * kMs).at_ns, 0);
  lan.deadline_ms = 25;
  EXPECT_EQ(PlayoutLatency(lan, 40 * kMs).MomentsFor(1000 * kMs).deadline_ns, 1025 * kMs);
}

TEST(PlayoutLatency, TheDeadlineIsNeverBeforeTheFrameIsSent) {
  PlayoutLatency l(Settings(0), 40 * kMs);
  l.Update(80 * kMs, 5 * kMs);
  EXPECT_EQ(l.DeadlineFor(1000 * kMs), 1000 * kMs);
}

// Found by the wall's simulation: a node stopped for 0.9 s answers its
// pings all at once; the sample takes the deviation to 225 ms and the
// margin past the latency, and every tile lost the time for its repairs.
TEST(PlayoutLatency, AStalledNodesRoundTripLeavesTheRepairsHalfTheLatency) {
  PlayoutLatency l(Settings(SyncSettings::kAutoLatency), 16 * kMs);
  l.Update(5 * kMs, 1 * kMs);
  const int64_t before = l.DeadlineFor(1000 * kMs) - 1000 * kMs;
  l.Update(117 * kMs, 225 * kMs);  // RFC 6298 after one sample of 900 ms
  EXPECT_EQ(l.latency_ns(), 400 * kMs) << "the maximum";
  EXPECT_GT(l.margin_ns(), l.latency_ns());
  EXPECT_EQ(l.DeadlineFor(1000 * kMs), 1200 * kMs) << "half the latency, not the frame's end";
  EXPECT_GT(l.DeadlineFor(1000 * kMs) - 1000 * kMs, before);
}

// One tile's wait for a repair, as LongestRepairWait takes it.
int64_t Wait(int64_t rtt_ns, int64_t rttvar_ns) {
  LongestRepairWait w;
  w.Tile(rtt_ns, rttvar_ns);
  return w.ns;
}

// Each tile waits for its own round trip and deviation: the longest wait
// is one tile's, not the largest round trip of one with the largest
// deviation of another (at 60 fps on a 20 ms path that waited 2-4 ms a
// round longer than any tile). A tile that measured nothing counts not.
TEST(LongestRepairWait, IsOneTilesOwnWait) {
  LongestRepairWait w;
  w.Tile(0, 0);
  EXPECT_EQ(w.ns, 0);
  w.Tile(24 * kMs, 2 * kMs);  // 2 + 24 + 4
  w.Tile(20 * kMs, 5 * kMs);  // 2 + 20 + 10
  w.Tile(0, 9 * kMs);
  EXPECT_EQ(w.ns, 32 * kMs);
}

// auto: the round trip out and back, two repairs and the decision's way,
// the maximum until one is measured, never above it, and only rising while
// the wall plays.
TEST(PlayoutLatency, AutoFollowsTheRoundTripsUpwardsWithinItsMaximum) {
  PlayoutLatency l(Settings(SyncSettings::kAutoLatency), 40 * kMs);
  l.SetSent(10'000, 0, 0);  // nothing lost: two repairs waited for
  EXPECT_EQ(l.latency_ns(), 400 * kMs);
  // The way there and back, two requests answered (each waited for as a
  // tile's repairs wait: RetryAfterNs, 2 + 20 + 4 ms), the margin.
  l.Update(20 * kMs, 2 * kMs);  // no repair measured: the sync's round trip
  EXPECT_EQ(l.latency_ns(), (20 + 2 * 26 + 19) * kMs);
  l.Update(20 * kMs, 2 * kMs, Wait(30 * kMs, 5 * kMs));  // repairs take longer: 2 + 30 + 10
  EXPECT_EQ(l.latency_ns(), (20 + 2 * 42 + 19) * kMs);
  l.Update(10 * kMs, 1 * kMs);
  EXPECT_EQ(l.latency_ns(), 123 * kMs);         // not lowered
  EXPECT_EQ(l.margin_ns(), (5 + 2 + 5) * kMs);  // the margin follows the path now
  l.Update(200 * kMs, 0);
  EXPECT_EQ(l.latency_ns(), 400 * kMs);
}

// Decided at the wall's side, the report and the decision cross the LAN:
// half the path's round trip and the margin's, less; the deadline 5 ms
// before the moment. A leader lost, it rises back at once.
TEST(PlayoutLatency, DecidedAtTheWallsSideItSavesTheReportAndTheDecisionsWays) {
  PlayoutLatency l(Settings(SyncSettings::kAutoLatency), 40 * kMs);
  l.SetSent(10'000, 0, 0);
  l.SetDecidedAtWall(true);
  l.Update(20 * kMs, 2 * kMs, Wait(20 * kMs, 2 * kMs));
  EXPECT_EQ(l.latency_ns(), (10 + 2 * 26 + 5) * kMs);
  EXPECT_EQ(l.margin_ns(), 5 * kMs);
  EXPECT_EQ(l.DeadlineFor(1000 * kMs), 1000 * kMs + l.latency_ns() - 5 * kMs);
  l.SetDecidedAtWall(false);
  l.Update(20 * kMs, 2 * kMs, Wait(20 * kMs, 2 * kMs));
  EXPECT_EQ(l.latency_ns(), (20 + 2 * 26 + 19) * kMs);
}

// The ticks of `seconds` at 25 fps from `*tick` on, an update each second
// asking what `update` asks; every tick shown and decided after the one
// before it.
template <typename Update>
void Play(PlayoutLatency* l, int* tick, int seconds, Update update) {
  PlayoutLatency::TickMoments before = l->MomentsFor((1000 + 40 * (*tick)++) * kMs);
  for (int end = *tick + 25 * seconds; *tick < end; ++*tick) {
    if (*tick % 25 == 0) update();
    const PlayoutLatency::TickMoments m = l->MomentsFor((1000 + 40 * *tick) * kMs);
    ASSERT_GT(m.at_ns, before.at_ns) << *tick;
    ASSERT_GT(m.deadline_ns, before.deadline_ns) << *tick;
    ASSERT_GE(m.at_ns - before.at_ns, 40 * kMs - 40 * kMs / 16) << *tick;  // a 16th early at most
    before = m;
  }
}

// A path that got better: auto falls once it has stayed better for 5
// seconds, a 16th of a frame interval each tick (2.5 ms at 25 fps), and
// stops a tenth above what the path asks; worse again, it rises at once.
TEST(PlayoutLatency, AutoFallsTickByTickOnceThePathHasStayedBetter) {
  PlayoutLatency l(Settings(SyncSettings::kAutoLatency), 40 * kMs);
  l.SetSent(10'000, 0, 0);      // nothing lost: two repairs waited for
  l.Update(60 * kMs, 5 * kMs);  // 60 + 2 x (2 + 60 + 10) + (30 + 10 + 5)
  ASSERT_EQ(l.latency_ns(), 249 * kMs);
  int tick = 0;
  const auto better = [&] { l.Update(20 * kMs, 2 * kMs); };  // asks for 91 ms
  Play(&l, &tick, 4, better);
  EXPECT_EQ(l.latency_ns(), 249 * kMs) << "4 calm seconds: held";
  Play(&l, &tick, 1, better);
  EXPECT_LT(l.latency_ns(), 249 * kMs) << "the 5th: falling";
  EXPECT_GE(l.latency_ns(), (249 - 25 * 2.5) * kMs);
  l.Update(60 * kMs, 5 * kMs);  // worse again: at once
  EXPECT_EQ(l.latency_ns(), 249 * kMs);
  Play(&l, &tick, 12, better);          // 5 calm, then 62 ms a second
  EXPECT_GT(l.latency_ns(), 91 * kMs);  // the hysteresis kept
  EXPECT_LE(l.latency_ns(), 91 * kMs + 11 * kMs);
}

// A spike over the maximum (a start whose repairs stalled) is held at the
// maximum and fallen from there, not from the spike: at 2 ms a second
// from the spike, a 40 ms path's wall kept 500 ms through a 20-s play.
TEST(PlayoutLatency, ASpikeOverTheMaximumFallsFromTheMaximum) {
  PlayoutLatency l(Settings(SyncSettings::kAutoLatency), 40 * kMs);
  l.SetSent(10'000, 0, 0);
  l.Update(20 * kMs, 2 * kMs, Wait(900 * kMs, 100 * kMs));
  EXPECT_EQ(l.latency_ns(), 400 * kMs);
  int tick = 0;
  Play(&l, &tick, 12, [&] { l.Update(20 * kMs, 2 * kMs); });  // asks for 91 ms
  EXPECT_LE(l.latency_ns(), 91 * kMs + 11 * kMs);             // 5 calm seconds, then 62 ms a second
}

// A packet found missing is asked for after `stream.reorder_ms`: auto
// waits as much more.
TEST(PlayoutLatency, AutoTakesInTheWaitBeforeAMissingPacketIsAskedFor) {
  PlayoutLatency l(Settings(SyncSettings::kAutoLatency), 40 * kMs, 3 * kMs);
  l.SetSent(10'000, 0, 0);  // nothing lost: two repairs waited for
  l.Update(20 * kMs, 2 * kMs);
  EXPECT_EQ(l.latency_ns(), (20 + 3 + 2 * 26 + 19) * kMs);
}

// A second of a wall at 25 fps sending `per_tick` packets a tick, `share`
// of them lost and sent again, as many times as a first request goes:
// its ticks opened, then its totals.
struct Sent {
  uint64_t sent = 0, again = 0, lost = 0;
  void Second(PlayoutLatency* l, uint64_t per_tick, double share) {
    const int copies = l->first_copies();
    for (int tick = 0; tick < 25; ++tick) {
      l->MomentsFor(1000 * kMs);
      sent += per_tick;
      const auto lost_now = static_cast<uint64_t>(static_cast<double>(per_tick) * share);
      lost += lost_now;
      sent += lost_now * copies;
      again += lost_now * copies;
    }
    l->SetSent(sent, again, lost);
  }
};

// Where more packets are lost, more of them need a third request (the
// request or the answer lost too, and again both copies of a request
// asked again): auto waits for as many repairs as leave one tick in
// 10,000 with a packet unrepaired, 2 to 5; 3 until measured. The share
// and the packets a tick are smoothed (an eighth a second), the first
// taken whole.
TEST(PlayoutLatency, AutoWaitsForMoreRepairsWhereMoreIsSentAgain) {
  PlayoutLatency l(Settings(SyncSettings::kAutoLatency), 40 * kMs);
  EXPECT_EQ(l.repair_rounds(), 3);
  l.SetSent(0, 0, 0);  // nothing sent yet: nothing measured
  EXPECT_EQ(l.repair_rounds(), 3);
  l.Update(20 * kMs, 2 * kMs);  // measured before the first tick: it is not pinned at the maximum
  Sent sent;
  sent.Second(&l, 5600, 0.03);  // 168 lost a tick: 168 x 0.06^5 > 1e-4 > 168 x 0.06^7
  EXPECT_DOUBLE_EQ(l.lost_share(), 0.03);
  EXPECT_EQ(l.repair_rounds(), 4);
  l.Update(20 * kMs, 2 * kMs);
  EXPECT_EQ(l.latency_ns(), (20 + 4 * 26 + 19) * kMs);
  sent.Second(&l, 5600, 0);  // a second with nothing lost: 2.6%, 147 x 0.0525^5 < 1e-4
  EXPECT_DOUBLE_EQ(l.lost_share(), 0.03 * 7 / 8);
  EXPECT_EQ(l.repair_rounds(), 3);
  for (int second = 0; second < 30; ++second) sent.Second(&l, 5600, 0.02);
  EXPECT_EQ(l.repair_rounds(), 3);
  for (int second = 0; second < 40; ++second) sent.Second(&l, 5600, 0.005);
  EXPECT_EQ(l.repair_rounds(), 2);
  for (int second = 0; second < 40; ++second) sent.Second(&l, 5600, 0.07);
  EXPECT_EQ(l.repair_rounds(), 5);
  l.SetSent(1'000, 0, 0);  // the counts started over: nothing lost since
  EXPECT_LT(l.lost_share(), 0.07);
}

// The same loss on a wall that sends fewer packets a tick loses fewer a
// tick: it needs fewer repairs for the same share of its ticks.
TEST(PlayoutLatency, AWallSendingFewerPacketsATickWaitsForFewerRepairs) {
  // A budget for repairs of 2%: a first request sent twice (2% at 1%) is
  // more than half of it.
  PlayoutLatency small(Settings(SyncSettings::kAutoLatency), 40 * kMs, 0, 0.02);
  PlayoutLatency large(Settings(SyncSettings::kAutoLatency), 40 * kMs, 0, 0.02);
  Sent small_sent, large_sent;
  for (int second = 0; second < 5; ++second) {
    small_sent.Second(&small, 100, 0.01);   // 1 lost a tick: 1 x 0.02^3 < 1e-4
    large_sent.Second(&large, 5600, 0.01);  // 56 lost a tick: 56 x 0.02^3 > 1e-4
  }
  EXPECT_EQ(small.repair_rounds(), 2);
  EXPECT_EQ(large.repair_rounds(), 3);
  EXPECT_EQ(large.first_copies(), 1);
}

// A first request goes twice where that saves a round, and its cost (2p
// sent again) is at most half the repairs' budget (5%): a round then fails
// at (2p)^2 from the first. The share is of what was lost, not of what was
// sent again, which the copies double.
TEST(PlayoutLatency, AFirstRequestGoesTwiceWhereThatSavesARound) {
  PlayoutLatency l(Settings(SyncSettings::kAutoLatency), 40 * kMs);
  Sent sent;
  EXPECT_EQ(l.first_copies(), 1);  // nothing measured
  sent.Second(&l, 5600, 0.01);     // single: 56 x 0.02^3 > 1e-4; doubled: 56 x 0.02^4 < 1e-4
  EXPECT_EQ(l.first_copies(), 2);
  EXPECT_EQ(l.repair_rounds(), 2);
  for (int second = 0; second < 10; ++second) sent.Second(&l, 5600, 0.01);
  EXPECT_DOUBLE_EQ(l.lost_share(), 0.01);
  EXPECT_EQ(l.first_copies(), 2);
  for (int second = 0; second < 40; ++second) sent.Second(&l, 5600, 0.005);
  EXPECT_EQ(l.first_copies(), 1);  // 28 x 0.01^3 < 1e-4: single needs 2 already
  EXPECT_EQ(l.repair_rounds(), 2);
  for (int second = 0; second < 40; ++second) sent.Second(&l, 5600, 0.02);
  EXPECT_EQ(l.first_copies(), 1);  // 4% sent again: over half the budget
  EXPECT_EQ(l.repair_rounds(), 3);
}

// The wall began to play before a round trip was measured: its ticks
// were opened with the maximum, and the first measurement lowers it step
// by step (each tick's moment and deadline after the one before), not at
// once.
TEST(PlayoutLatency, AutoOpenedAtItsMaximumFallsFromItTickByTick) {
  PlayoutLatency l(Settings(SyncSettings::kAutoLatency), 40 * kMs);
  EXPECT_EQ(l.MomentsFor(960 * kMs).at_ns, 1360 * kMs);
  l.Update(20 * kMs, 2 * kMs);  // three repairs until the loss is measured: 117 ms
  EXPECT_EQ(l.latency_ns(), 400 * kMs);
  int tick = 0;
  Play(&l, &tick, 16, [&] { l.Update(20 * kMs, 2 * kMs); });
  EXPECT_GT(l.latency_ns(), 117 * kMs);
  EXPECT_LE(l.latency_ns(), 117 * kMs + 14 * kMs);  // a tenth over the ask, and a step
}

// A short path: never less than a frame interval, the slack a wall
// without a latency has.
TEST(PlayoutLatency, AutoIsNeverUnderAFrameInterval) {
  PlayoutLatency l(Settings(SyncSettings::kAutoLatency), 40 * kMs);
  l.Update(1 * kMs, 0, Wait(2 * kMs, 0));
  EXPECT_EQ(l.latency_ns(), 40 * kMs);
}

TEST(PlayoutLatency, WithoutOneTheWallIsNotTimed) {
  EXPECT_FALSE(PlayoutLatency(Settings(SyncSettings::kNoLatency), 40 * kMs).timed());
}

}  // namespace
}  // namespace tilestream
