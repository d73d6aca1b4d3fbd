#include "common/control/present_schedule.h"

#include <gtest/gtest.h>

namespace tilestream {
namespace {

constexpr int64_t kMs = 1'000'000;

SyncEvent Decision(uint32_t tick, int64_t at_ns, SyncDecision d = SyncDecision::kPresent) {
  SyncEvent e;
  e.decision = d;
  e.timestamp = 1000 + tick;
  e.tick = tick;
  e.at_ns = at_ns;
  return e;
}

// Without a playout latency, or a skip: acted on at once.
TEST(PresentSchedule, ADecisionWithoutAMomentOrASkipIsActedOnAtOnce) {
  PresentSchedule s;
  EXPECT_EQ(s.Take(Decision(1, 0), 100 * kMs)->tick, 1u);
  EXPECT_EQ(s.Take(Decision(2, 500 * kMs, SyncDecision::kSkip), 100 * kMs)->tick, 2u);
  EXPECT_EQ(s.next_at_ns(), PresentSchedule::kNever);
  EXPECT_EQ(s.late(), 0u);
}

// With one: held until its moment, in the order they came; one that came
// after its moment is counted, and is due at once.
TEST(PresentSchedule, DecisionsWaitForTheirMomentsInOrderAndLateOnesAreCounted) {
  PresentSchedule s;
  EXPECT_FALSE(s.Take(Decision(1, 300 * kMs), 100 * kMs));
  EXPECT_FALSE(s.Take(Decision(2, 340 * kMs), 110 * kMs));
  EXPECT_EQ(s.next_at_ns(), 300 * kMs);
  EXPECT_EQ(s.TakeNext().tick, 1u);
  EXPECT_EQ(s.next_at_ns(), 340 * kMs);
  EXPECT_FALSE(s.Take(Decision(3, 380 * kMs), 395 * kMs));  // 15 ms late
  EXPECT_EQ(s.late(), 1u);
  EXPECT_EQ(s.late_max_ns(), 15 * kMs);
  EXPECT_EQ(s.TakeNext().tick, 2u);
  EXPECT_EQ(s.TakeNext().tick, 3u);
  EXPECT_EQ(s.next_at_ns(), PresentSchedule::kNever);
}

// A moment further off than any latency (clocks seconds apart) is not
// waited for; nor is the oldest held once kMaxTimed are.
TEST(PresentSchedule, NeitherAMomentFarOffNorMoreThanItHoldsIsWaitedFor) {
  PresentSchedule s;
  EXPECT_EQ(s.Take(Decision(1, PresentSchedule::kMaxAheadNs + 1), 0)->tick, 1u);
  for (uint32_t t = 0; t < PresentSchedule::kMaxTimed; ++t)
    EXPECT_FALSE(s.Take(Decision(10 + t, (1000 + t) * kMs), 0));
  const std::optional<SyncEvent> out = s.Take(Decision(99, 5000 * kMs), 0);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->tick, 10u);
  EXPECT_EQ(s.next_at_ns(), 1001 * kMs);
}

}  // namespace
}  // namespace tilestream
