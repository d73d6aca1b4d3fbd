// Pacer: spreads a frame's packets evenly over the frame interval, the
// ST 2110-21 idea, so that many streams converging on a switch never burst
// beyond what its ports and the NIC rings absorb.
//
// The sender calls WaitForPacket(i) before sending the burst that starts at
// packet i. The pacer sleeps with clock_nanosleep until shortly before the
// packet's slot and spins the rest of the way: measured here, sleeping per
// packet misses the rate, busy-polling burns a core, and a sleep with 1 ns
// timer slack plus a short spin holds a 2.5 Gbit/s target within 0.5%.
//
// If the sender falls behind (preempted, slow disk) packets that are due go
// out at once, but never more than max_lag_ns worth of them: beyond that the
// schedule slips instead of bursting the backlog. Not thread-safe: one pacer
// per sending thread. No allocation, no logging.
#pragma once

#include <cstdint>

namespace tilestream {

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
  int64_t NowNs() override;
  void SleepUntilNs(int64_t deadline_ns) override;
};

struct PacerStats {
  uint64_t waits = 0;   // WaitForPacket calls
  uint64_t sleeps = 0;  // clock_nanosleep calls
  uint64_t late = 0;    // waits that found their slot already past
  uint64_t slips = 0;   // times the schedule was moved back by a stall
  int64_t slipped_ns = 0;
};

class Pacer {
 public:
  struct Options {
    bool enabled = true;          // false: WaitForPacket returns at once
    int64_t spin_ns = 10'000;     // spin this long before a slot instead of sleeping
    int64_t max_lag_ns = 1'000'000;  // at most this much backlog goes out at line rate
  };

  // `clock` must outlive the pacer.
  Pacer(Clock* clock, const Options& options) : clock_(clock), options_(options) {}

  // Plans a frame of `packets` packets spread over [start_ns, start_ns + interval_ns):
  // packet i's slot is start_ns + i * interval_ns / packets.
  // REQUIRES: packets > 0, interval_ns > 0.
  void BeginFrame(int64_t start_ns, int64_t interval_ns, uint32_t packets);

  // Returns when packet `index` of the current frame may be sent.
  // REQUIRES: index < packets of BeginFrame; indices non-decreasing.
  void WaitForPacket(uint32_t index);

  int64_t SlotNs(uint32_t index) const;
  const PacerStats& stats() const { return stats_; }

 private:
  Clock* clock_;
  Options options_;
  PacerStats stats_;
  int64_t start_ns_ = 0;
  int64_t interval_ns_ = 1;
  uint32_t packets_ = 1;
};

}  // namespace tilestream
