// The one clock of the project: CLOCK_MONOTONIC (what std::chrono::
// steady_clock reads on Linux), in nanoseconds, and sleeping until a deadline
// on it. Every timeout, deadline, rate and pacing slot is on this clock.
// Clock is the seam tests use to drive time themselves. Thread-safe.
#pragma once

#include <time.h>

#include <cstdint>

namespace tilestream {

inline constexpr int64_t kNsPerMs = 1'000'000;
inline constexpr int64_t kNsPerSecond = 1'000'000'000;

// CLOCK_MONOTONIC now, in nanoseconds. One vDSO call, no system call.
inline int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * kNsPerSecond + ts.tv_nsec;
}

// The same clock in milliseconds, for timeouts of interactive tools.
inline int64_t MonotonicMs() { return MonotonicNs() / kNsPerMs; }

// CLOCK_REALTIME in nanoseconds: only for when a frame was shown, which
// display nodes compare across hosts (their clocks synced by PTP or NTP).
inline int64_t RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * kNsPerSecond + ts.tv_nsec;
}

class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t NowNs() = 0;
  // Returns at or after `deadline_ns` (on this clock).
  virtual void SleepUntilNs(int64_t deadline_ns) = 0;
};

// CLOCK_MONOTONIC and clock_nanosleep(TIMER_ABSTIME). The first sleep sets
// the calling thread's timer slack to 1 ns (prctl) so sleeps end on time.
class MonotonicClock final : public Clock {
 public:
  int64_t NowNs() override { return MonotonicNs(); }
  void SleepUntilNs(int64_t deadline_ns) override;
};

// Time that moves only when its owner moves it (the tests, the wall's
// simulation): nothing may sleep on it, so SleepUntilNs moves it forward
// to the deadline, as a sleeping thread would see it.
class ManualClock final : public Clock {
 public:
  int64_t NowNs() override { return now_ns_; }
  void SleepUntilNs(int64_t deadline_ns) override {
    if (deadline_ns > now_ns_) now_ns_ = deadline_ns;
  }
  void Set(int64_t ns) { now_ns_ = ns; }
  void Advance(int64_t ns) { now_ns_ += ns; }

 private:
  int64_t now_ns_ = 0;
};

}  // namespace tilestream
