#include "common/pacer.h"

#include <gtest/gtest.h>

#include <vector>

namespace tilestream {
namespace {

// Time advances by `step_ns` each time it is read (so spin loops end), and
// jumps on sleeps, which are recorded.
class FakeClock final : public Clock {
 public:
  int64_t NowNs() override { return now_ += step_ns; }
  void SleepUntilNs(int64_t deadline_ns) override {
    sleeps.push_back(deadline_ns);
    if (deadline_ns > now_) now_ = deadline_ns;
  }
  void Advance(int64_t ns) { now_ += ns; }
  int64_t now() const { return now_; }

  int64_t step_ns = 100;
  std::vector<int64_t> sleeps;

 private:
  int64_t now_ = 1'000'000'000;
};

constexpr int64_t kMs = 1'000'000;

TEST(Pacer, ReleasesEachBurstAtItsSlotEvenlyOverTheInterval) {
  FakeClock clock;
  Pacer pacer(&clock, {});
  const int64_t start = clock.now();
  pacer.BeginFrame(start, 40 * kMs, 1000);
  for (uint32_t i = 0; i < 1000; i += 4) {
    pacer.WaitForPacket(i);
    const int64_t slot = start + int64_t{i} * 40 * kMs / 1000;
    ASSERT_GE(clock.now(), slot) << i;
    ASSERT_LT(clock.now(), slot + 1000) << i;  // within a few spin steps
  }
  EXPECT_LT(clock.now(), start + 40 * kMs);
  EXPECT_EQ(pacer.stats().late, 1u);  // packet 0's slot is now
}

TEST(Pacer, SleepsOncePerBurstAndSpinsOnlyTheLastStretch) {
  FakeClock clock;
  Pacer::Options o;
  o.spin_ns = 20'000;
  Pacer pacer(&clock, o);
  const int64_t start = clock.now();
  pacer.BeginFrame(start, 10 * kMs, 100);  // bursts 400 us apart
  for (uint32_t i = 0; i < 100; i += 4) pacer.WaitForPacket(i);
  EXPECT_EQ(pacer.stats().sleeps, 24u);  // every burst but the first
  ASSERT_EQ(clock.sleeps.size(), 24u);
  for (size_t k = 0; k < clock.sleeps.size(); ++k)
    EXPECT_EQ(clock.sleeps[k], start + int64_t(k + 1) * 400'000 - 20'000);
}

TEST(Pacer, NeverSleepsWhenTheSlotIsWithinTheSpinWindow) {
  FakeClock clock;
  Pacer pacer(&clock, {});
  pacer.BeginFrame(clock.now(), 1 * kMs, 100);  // 10 us per packet
  for (uint32_t i = 0; i < 100; ++i) pacer.WaitForPacket(i);
  EXPECT_EQ(pacer.stats().sleeps, 0u);
}

TEST(Pacer, SendsDuePacketsAtOnceAfterAShortStall) {
  FakeClock clock;
  Pacer pacer(&clock, {});
  const int64_t start = clock.now();
  pacer.BeginFrame(start, 10 * kMs, 100);
  pacer.WaitForPacket(0);
  clock.Advance(kMs / 2);  // 500 us stall: packets 1..5 are due (100 us apart)
  const int64_t before = clock.now();
  for (uint32_t i = 1; i <= 5; ++i) pacer.WaitForPacket(i);
  EXPECT_EQ(pacer.stats().sleeps, 0u);
  EXPECT_LT(clock.now() - before, 10'000);
  EXPECT_EQ(pacer.stats().slips, 0u);
  pacer.WaitForPacket(6);  // back on schedule
  EXPECT_EQ(pacer.stats().sleeps, 1u);
  EXPECT_GE(clock.now(), start + 600'000);
}

TEST(Pacer, LongStallSlipsTheScheduleInsteadOfBurstingTheBacklog) {
  FakeClock clock;
  Pacer pacer(&clock, {});  // max lag 1 ms
  const int64_t start = clock.now();
  pacer.BeginFrame(start, 10 * kMs, 100);
  pacer.WaitForPacket(0);
  clock.Advance(5 * kMs);
  pacer.WaitForPacket(1);
  EXPECT_EQ(pacer.stats().slips, 1u);
  EXPECT_NEAR(static_cast<double>(pacer.stats().slipped_ns), 5 * kMs - 100'000 - kMs, 1000);
  // Only about 1 ms of packets (10) are now due at once.
  int immediate = 0;
  for (uint32_t i = 2; i < 100; ++i) {
    const size_t sleeps = clock.sleeps.size();
    pacer.WaitForPacket(i);
    if (clock.sleeps.size() == sleeps) ++immediate; else break;
  }
  EXPECT_LE(immediate, 11);
  EXPECT_GE(immediate, 9);
}

TEST(Pacer, DisabledNeverWaits) {
  FakeClock clock;
  Pacer::Options o;
  o.enabled = false;
  Pacer pacer(&clock, o);
  pacer.BeginFrame(clock.now() + 10 * kMs, 10 * kMs, 100);
  const int64_t before = clock.now();
  for (uint32_t i = 0; i < 100; ++i) pacer.WaitForPacket(i);
  EXPECT_EQ(clock.now(), before);
  EXPECT_TRUE(clock.sleeps.empty());
}

TEST(Pacer, MonotonicClockSleepsAtLeastUntilTheDeadline) {
  MonotonicClock clock;
  const int64_t deadline = clock.NowNs() + 2 * kMs;
  clock.SleepUntilNs(deadline);
  EXPECT_GE(clock.NowNs(), deadline);
}

}  // namespace
}  // namespace tilestream
