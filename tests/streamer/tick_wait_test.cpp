// How a tile rank waits for its next tick (streamer/tick_wait.h): one rule
// a test, on a clock the test moves.
#include "streamer/tick_wait.h"

#include <gtest/gtest.h>

namespace tilestream {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kInterval = 40 * kMs;  // 25 fps
constexpr int64_t kStart = 1000 * kMs;   // tick 0 came then
constexpr int64_t kNoHeartbeat = 1'000'000 * kMs;

TickMessage Tick(uint64_t tick, bool doorbell, uint64_t sequence) {
  TickMessage m;
  m.tick = tick;
  m.interval_ns = kInterval;
  m.doorbell = doorbell;
  m.sequence = sequence;
  return m;
}

TEST(TickWait, ALateTickDoesNotPushTheNextOnesExpectedTimeBack) {
  TickWait w(false);
  w.Took(Tick(0, false, 1), kStart);
  EXPECT_EQ(w.next_tick_due_ns(), kStart + kInterval);
  w.Took(Tick(1, false, 2), kStart + kInterval + 15 * kMs);  // 15 ms late
  EXPECT_EQ(w.tick_due_ns(), kStart + kInterval) << "its frame is paced from when it was due";
  EXPECT_EQ(w.next_tick_due_ns(), kStart + 2 * kInterval);
}

// While the coordinator sheds ticks (common/control/tick_shedder.h) the
// next tick sent comes several intervals later: the frame is paced until
// then, and the rank neither hurries nor looks for the tick before.
TEST(TickWait, TheNextTickIsExpectedWhenTheCoordinatorSaysItIsSent) {
  TickWait w(false);
  TickMessage m = Tick(0, false, 1);
  m.next_in_ticks = 3;
  w.Took(m, kStart);
  EXPECT_EQ(w.tick_due_ns(), kStart);
  EXPECT_EQ(w.next_tick_due_ns(), kStart + 3 * kInterval);
  w.Took(Tick(3, false, 2), kStart + 3 * kInterval);
  EXPECT_EQ(w.tick_due_ns(), kStart + 3 * kInterval) << "the schedule is the interval's";
  EXPECT_EQ(w.next_tick_due_ns(), kStart + 4 * kInterval);
}

TEST(TickWait, WithoutADoorbellItSleepsUntilTheTickIsDueThenProbesBackingOff) {
  TickWait w(true);  // the rank has one, but the coordinator did not arm it
  w.Took(Tick(0, false, 1), kStart);
  EXPECT_FALSE(w.doorbell());
  EXPECT_EQ(w.WaitNs(kStart + 10 * kMs, kNoHeartbeat), 30 * kMs) << "in one sleep";
  const int64_t due = kStart + kInterval;
  EXPECT_EQ(w.WaitNs(due, kNoHeartbeat), TickWait::kPollNs);
  EXPECT_EQ(w.WaitNs(due + kMs, kNoHeartbeat), kMs / 2);
  EXPECT_EQ(w.WaitNs(due + 100 * kMs, kNoHeartbeat), TickWait::kMaxPollNs) << "paused: 500/s";
  EXPECT_EQ(w.WaitNs(due + 100 * kMs, due + 100 * kMs + kMs / 100), TickWait::kPollNs)
      << "never past the heartbeat, never shorter than a probe";
}

TEST(TickWait, ArmedItSleepsUntilTheRingOrTheTickIsWellOverdue) {
  TickWait w(true);
  w.Took(Tick(0, true, 1), kStart);
  ASSERT_TRUE(w.doorbell());
  EXPECT_EQ(w.WaitNs(kStart + 10 * kMs, kNoHeartbeat), 30 * kMs + TickWait::kLateTickNs);
  const int64_t heartbeat = kStart + 250 * kMs;
  EXPECT_EQ(w.WaitNs(kStart + 100 * kMs, heartbeat), 150 * kMs) << "paused: to the heartbeat";
}

TEST(TickWait, ARingBeforeItsMessageIsFollowedByBriefProbesBackingOff) {
  TickWait w(true);
  w.Took(Tick(0, true, 1), kStart);
  const int64_t rang = kStart + kInterval;
  w.Rang(2, rang);
  EXPECT_EQ(w.WaitNs(rang, kNoHeartbeat), TickWait::kPollNs);
  EXPECT_EQ(w.WaitNs(rang + 2 * kMs, kNoHeartbeat), kMs);
  EXPECT_EQ(w.WaitNs(rang + 10 * kMs, kNoHeartbeat), TickWait::kMaxPollNs);
  const int64_t given_up = rang + TickWait::kRingLookNs;
  EXPECT_EQ(w.WaitNs(given_up, given_up + 200 * kMs), 200 * kMs)
      << "no message after 20 ms: the next ring or the heartbeat";
}

TEST(TickWait, ARingForATickAlreadyTakenChangesNothing) {
  TickWait w(true);
  w.Took(Tick(0, true, 1), kStart);
  w.Took(Tick(1, true, 2), kStart + kInterval);  // found before its ring came
  w.Rang(2, kStart + kInterval + kMs);           // that ring
  EXPECT_EQ(w.WaitNs(kStart + kInterval + kMs, kNoHeartbeat),
            kInterval - kMs + TickWait::kLateTickNs);
  w.Rang(0, kStart + kInterval + kMs);  // a datagram that is no ring
  EXPECT_EQ(w.WaitNs(kStart + kInterval + kMs, kNoHeartbeat),
            kInterval - kMs + TickWait::kLateTickNs);
}

TEST(TickWait, OverdueWithNoRingItProbesBrieflyOnceThenWaitsForTheHeartbeat) {
  TickWait w(true);
  w.Took(Tick(0, true, 1), kStart);
  const int64_t late = kStart + kInterval + TickWait::kLateTickNs;
  w.Slept(late);
  EXPECT_EQ(w.WaitNs(late, kNoHeartbeat), TickWait::kPollNs);
  const int64_t after = late + TickWait::kLateLookNs;
  w.Slept(after);
  EXPECT_EQ(w.WaitNs(after, after + 200 * kMs), 200 * kMs) << "paused: no tick is coming";
}

TEST(TickWait, TicksThatKeepComingWithoutARingGiveTheDoorbellUp) {
  TickWait w(true);
  w.Took(Tick(0, true, 1), kStart);
  for (uint64_t t = 1; t < TickWait::kUnrungTicks; ++t) {
    const int64_t late = kStart + static_cast<int64_t>(t) * kInterval + TickWait::kLateTickNs;
    w.Slept(late);
    EXPECT_FALSE(w.Took(Tick(t, true, t + 1), late + kMs)) << t;
    EXPECT_TRUE(w.doorbell());
  }
  // One ring in between starts the count again.
  w.Rang(11, kStart + 10 * kInterval);
  EXPECT_FALSE(w.Took(Tick(10, true, 11), kStart + 10 * kInterval));
  for (uint64_t t = 11; t < 11 + TickWait::kUnrungTicks; ++t) {
    const int64_t late = kStart + static_cast<int64_t>(t) * kInterval + TickWait::kLateTickNs;
    w.Slept(late);
    const bool gave_up = w.Took(Tick(t, true, t + 1), late + kMs);
    EXPECT_EQ(gave_up, t == 10 + TickWait::kUnrungTicks) << t;
  }
  EXPECT_FALSE(w.doorbell()) << "polling from now on, whatever the ticks say";
}

TEST(TickWait, ATickFoundWithoutSleepingCountsNeitherWay) {
  TickWait w(true);
  w.Took(Tick(0, true, 1), kStart);
  for (uint64_t t = 1; t <= 3 * TickWait::kUnrungTicks; ++t)  // a rank always behind
    EXPECT_FALSE(w.Took(Tick(t, true, t + 1), kStart + static_cast<int64_t>(t) * kInterval));
  EXPECT_TRUE(w.doorbell());
}

// The counter that tells a tick seen late (a late ring, a late message, a
// stalled machine) from one a busy rank skipped.
TEST(TickWait, TicksSeenLateAreThoseDueWhileTheRankWaitedAndTakenAQuarterLate) {
  const int64_t due = kStart + 10 * kInterval;
  // Waiting since before it was due: on time, a little late, over a quarter late.
  EXPECT_EQ(TickWait::SeenLate(due - kMs, due + kMs, due, kInterval, 1), 0u);
  EXPECT_EQ(TickWait::SeenLate(due - kMs, due + kInterval / 4, due, kInterval, 1), 0u);
  EXPECT_EQ(TickWait::SeenLate(due - kMs, due + kInterval / 4 + 1, due, kInterval, 1), 1u);
  // Busy sending until after it was due: not seen late, however late taken.
  EXPECT_EQ(TickWait::SeenLate(due + kMs, due + kInterval / 2, due, kInterval, 1), 0u);
  // Two waiting at once: the older was due a whole interval before it was taken.
  EXPECT_EQ(TickWait::SeenLate(due - 2 * kInterval, due + kMs, due, kInterval, 2), 1u);
  EXPECT_EQ(TickWait::SeenLate(due - kMs, due + kMs, due, kInterval, 2), 0u)
      << "the older one came while the rank was busy: a plain skip";
  EXPECT_EQ(TickWait::SeenLate(due - 100 * kInterval, due + kInterval, due, kInterval, 1000000),
            64u)
      << "bounded";
}

}  // namespace
}  // namespace tilestream
