#include "common/send/pacer.h"

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
constexpr uint64_t kPacket = 9000;

Pacer::Options TwoMs() {
  Pacer::Options o;
  o.quantum_ns = 2 * kMs;
  return o;
}

// Sends a frame through the pacer; returns each burst's [first, end) and
// when it was released.
struct Burst {
  uint32_t first, end;
  int64_t at;
};
std::vector<Burst> SendFrame(Pacer& pacer, FakeClock& clock, uint32_t packets) {
  std::vector<Burst> bursts;
  for (uint32_t i = 0; i < packets;) {
    const uint32_t end = pacer.WaitForBurst(i);
    bursts.push_back({i, end, clock.now()});
    i = end;
  }
  return bursts;
}

TEST(Pacer, WakesOncePerQuantumAndReleasesItsPacketsAtTheirSlot) {
  FakeClock clock;
  Pacer pacer(&clock, TwoMs());  // 512 KiB bursts
  const int64_t start = clock.now();
  pacer.BeginFrame(start, 40 * kMs, 1000, 1000 * kPacket);  // 50 packets (450 KB) in 2 ms
  const auto bursts = SendFrame(pacer, clock, 1000);
  ASSERT_EQ(bursts.size(), 20u);
  for (const Burst& b : bursts) {
    EXPECT_EQ(b.end - b.first, 50u);
    const int64_t slot = start + int64_t{b.first} * 40 * kMs / 1000;
    EXPECT_GE(b.at, slot) << b.first;
    EXPECT_LT(b.at, slot + 1000) << b.first;  // within a few spin steps
  }
  EXPECT_EQ(pacer.stats().sleeps, 19u);  // every burst but the first
  EXPECT_EQ(pacer.stats().squeezes, 0u);
  for (size_t k = 0; k < clock.sleeps.size(); ++k)
    EXPECT_EQ(clock.sleeps[k], start + int64_t(k + 1) * 2 * kMs - 10'000);
}

TEST(Pacer, TheByteBoundShrinksTheQuantumAtHighRates) {
  FakeClock clock;
  Pacer::Options o = TwoMs();
  o.max_burst_bytes = 90'000;  // 10 packets
  Pacer pacer(&clock, o);
  pacer.BeginFrame(clock.now(), 40 * kMs, 1000, 1000 * kPacket);
  const auto bursts = SendFrame(pacer, clock, 1000);
  EXPECT_EQ(bursts.size(), 100u);
  for (const Burst& b : bursts) EXPECT_LE((b.end - b.first) * kPacket, o.max_burst_bytes);
}

TEST(Pacer, AShortStallSendsTheDueBurstAtOnceAndStaysOnSchedule) {
  FakeClock clock;
  Pacer pacer(&clock, TwoMs());
  const int64_t start = clock.now();
  pacer.BeginFrame(start, 40 * kMs, 1000, 1000 * kPacket);
  EXPECT_EQ(pacer.WaitForBurst(0), 50u);
  clock.Advance(3 * kMs);  // burst 2 (at 2 ms) is due, by less than a quantum
  const size_t sleeps = clock.sleeps.size();
  EXPECT_EQ(pacer.WaitForBurst(50), 100u);
  EXPECT_EQ(clock.sleeps.size(), sleeps);
  EXPECT_EQ(pacer.stats().squeezes, 0u);
  EXPECT_EQ(pacer.WaitForBurst(100), 150u);  // at its slot, 4 ms
  EXPECT_GE(clock.now(), start + 4 * kMs);
  EXPECT_LT(clock.now(), start + 4 * kMs + 1000);
}

// 20 ms gone, 950 packets left for the 20 ms left: bursts of the same size,
// closer together.
TEST(Pacer, ALongStallSqueezesTheRestIntoWhatIsLeftOfTheWindow) {
  FakeClock clock;
  Pacer pacer(&clock, TwoMs());
  const int64_t start = clock.now();
  pacer.BeginFrame(start, 40 * kMs, 1000, 1000 * kPacket);
  uint32_t i = pacer.WaitForBurst(0);
  clock.Advance(20 * kMs);
  std::vector<int64_t> at;
  while (i < 1000) {
    const uint32_t end = pacer.WaitForBurst(i);
    EXPECT_LE(end - i, 50u) << "never more than a burst at once";
    at.push_back(clock.now());
    i = end;
  }
  EXPECT_EQ(pacer.stats().squeezes, 1u);
  ASSERT_EQ(at.size(), 19u);
  EXPECT_LT(at.back(), start + 40 * kMs) << "the frame still ends in its window";
  EXPECT_GT(at.back(), start + 38 * kMs) << "spread over what is left, not sent at once";
  for (size_t k = 1; k < at.size(); ++k) EXPECT_GT(at[k] - at[k - 1], kMs);  // 20 ms / 19
}

TEST(Pacer, PastTheWindowTheRestStillTakesAQuantum) {
  FakeClock clock;
  Pacer pacer(&clock, TwoMs());
  const int64_t start = clock.now();
  pacer.BeginFrame(start, 40 * kMs, 1000, 1000 * kPacket);
  uint32_t i = pacer.WaitForBurst(0);
  clock.Advance(50 * kMs);
  const int64_t stalled = clock.now();
  while (i < 1000) i = pacer.WaitForBurst(i);
  EXPECT_GE(clock.now(), stalled + 2 * kMs * 18 / 19);  // 19 bursts over 2 ms
  EXPECT_LT(clock.now(), stalled + 2 * kMs + 1000);
}

TEST(Pacer, DisabledOrHurriedNeverWaitsButKeepsTheByteBound) {
  FakeClock clock;
  Pacer::Options o;
  o.enabled = false;
  Pacer pacer(&clock, o);
  pacer.BeginFrame(clock.now() + 10 * kMs, 10 * kMs, 1000, 1000 * kPacket);
  const int64_t before = clock.now();
  EXPECT_EQ(pacer.WaitForBurst(0), 58u);  // 512 KiB of 9000-byte packets
  EXPECT_EQ(clock.now(), before);
  Pacer paced(&clock, TwoMs());
  paced.BeginFrame(clock.now() + 10 * kMs, 40 * kMs, 1000, 1000 * kPacket);
  EXPECT_EQ(paced.WaitForBurst(0, /*hurry=*/true), 50u);
  EXPECT_TRUE(clock.sleeps.empty());
}

// Tile i of n starts its bursts i/n of a burst interval in, so the streams
// of one server take turns; the frame still ends in its window.
TEST(Pacer, APhaseShiftsEveryBurstButNotTheWindowsEnd) {
  FakeClock clock;
  Pacer::Options o = TwoMs();
  o.phase = 0.5;
  Pacer pacer(&clock, o);
  const int64_t start = clock.now();
  pacer.BeginFrame(start, 40 * kMs, 1000, 1000 * kPacket);
  const auto bursts = SendFrame(pacer, clock, 1000);
  ASSERT_EQ(bursts.size(), 20u);
  EXPECT_GE(bursts[0].at, start + kMs);
  EXPECT_LT(bursts[0].at, start + kMs + 1000);
  EXPECT_LT(bursts.back().at, start + 40 * kMs);
  EXPECT_GT(bursts.back().at, start + 38 * kMs);
}

// The default: bursts of 512 KiB whatever the rate, down to where that would
// leave 10 ms between them.
TEST(Pacer, ByDefaultABurstIsTheByteBoundAtAnyRateAboveTheLongestQuantum) {
  FakeClock clock;
  Pacer pacer(&clock, {});
  for (int64_t interval : {45 * kMs, 166 * kMs}) {               // 22 and 6 fps
    pacer.BeginFrame(clock.now(), interval, 1375, 1375 * 8960);  // a 2560x1600 frame
    EXPECT_EQ(pacer.burst_packets(), 58u) << interval;
  }
  pacer.BeginFrame(clock.now(), 1000 * kMs, 1375, 1375 * 8960);  // 1 fps: 10 ms of packets
  EXPECT_EQ(pacer.burst_packets(), 13u);
}

// Bursts end where a GSO send ends (7 packets at MTU 9000), so that every
// GRO message the receiver predicts is whole; a bound below one send holds.
TEST(Pacer, BurstsAreWholeMultiplesWhereTheBoundAllowsOne) {
  FakeClock clock;
  Pacer::Options o;
  o.burst_multiple = 7;
  Pacer pacer(&clock, o);
  pacer.BeginFrame(clock.now(), 166 * kMs, 1375, 1375 * 8960);  // 58 by the byte bound
  EXPECT_EQ(pacer.burst_packets(), 56u);
  const auto bursts = SendFrame(pacer, clock, 1375);
  ASSERT_EQ(bursts.size(), 25u);
  for (size_t b = 0; b + 1 < bursts.size(); ++b) EXPECT_EQ(bursts[b].end - bursts[b].first, 56u);
  o.max_burst_bytes = 3 * 8960;
  Pacer small(&clock, o);
  small.BeginFrame(clock.now(), 166 * kMs, 1375, 1375 * 8960);
  EXPECT_EQ(small.burst_packets(), 3u);
}

TEST(Pacer, MonotonicClockSleepsAtLeastUntilTheDeadline) {
  MonotonicClock clock;
  const int64_t deadline = clock.NowNs() + 2 * kMs;
  clock.SleepUntilNs(deadline);
  EXPECT_GE(clock.NowNs(), deadline);
}

}  // namespace
}  // namespace tilestream
