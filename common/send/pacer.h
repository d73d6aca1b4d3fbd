// Pacer: spreads a frame's packets evenly over the frame interval, the
// ST 2110-21 idea, so that many streams converging on a switch never burst
// beyond what its ports and the NIC rings absorb, and does it with as few
// wake-ups as that allows: the cost on a virtual machine is the wake-up
// (about 30 us of CPU), not the bytes.
//
// Pacing is by time: the sender wakes once per quantum and sends the packets
// the schedule has due by then, as one burst (several GSO messages in one
// sendmmsg). A burst is Options::max_burst_bytes (512 KiB) of packets, or a
// quantum's worth where the rate is so low that Options::quantum_ns (10 ms)
// holds less, and whole GSO sends (Options::burst_multiple): a 2560x1600
// frame is 25 bursts of 56 packets at any rate from 6 fps up. See
// docs/decisions.md for the bound.
//
// The sender calls WaitForBurst(next) before sending the burst that starts
// at packet `next`; it sleeps with clock_nanosleep until shortly before that
// packet's slot and spins the rest of the way, and returns where the burst
// ends. A sender that falls behind (preempted, slow disk) by more than a
// quantum squeezes the rest of the frame into what is left of its window
// instead of sending the backlog at line rate. Not thread-safe: one pacer
// per sending thread. No allocation, no logging.
#pragma once

#include <cstdint>

#include "common/base/clock.h"

namespace tilestream {

// Waits until `deadline_ns`: sleeps until `spin_ns` before it, then spins
// (a sleep ends up to tens of microseconds late). Returns whether it slept.
bool WaitUntilNs(Clock* clock, int64_t deadline_ns, int64_t spin_ns);

struct PacerStats {
  uint64_t waits = 0;     // WaitForBurst calls: one per burst
  uint64_t sleeps = 0;    // clock_nanosleep calls (wake-ups)
  uint64_t late = 0;      // bursts that went more than spin_ns after their slot
  uint64_t squeezes = 0;  // times the rest of a frame was re-planned after a stall
};

class Pacer {
 public:
  struct Options {
    bool enabled = true;                   // false: bursts go at once
    int64_t quantum_ns = 10'000'000;       // a burst: the packets of at most this long
    uint64_t max_burst_bytes = 512 << 10;  // and at most this many bytes
    int64_t spin_ns = 10'000;              // spin this long before a slot instead of sleeping
    // Bursts are whole multiples of this many packets where the bounds
    // allow one (a GSO send's: the receiver predicts where each GRO
    // message's pixels go from whole sends, common/receive/packet_placement.h).
    uint32_t burst_multiple = 1;
    // 0..1: bursts start this fraction of a burst interval into the frame,
    // so that the streams of one server (tile i of n: i / n) take turns
    // instead of all bursting at the same instants.
    double phase = 0;
  };

  // `clock` must outlive the pacer.
  Pacer(Clock* clock, const Options& options) : clock_(clock), options_(options) {}

  // Plans a frame of `packets` packets, `frame_bytes` bytes in all, spread
  // over [start_ns, start_ns + window_ns): packet i's slot is
  // start_ns + i * window_ns / packets.
  // REQUIRES: packets > 0, window_ns > 0.
  void BeginFrame(int64_t start_ns, int64_t window_ns, uint32_t packets, uint64_t frame_bytes);

  // Returns when packet `next` may be sent, with the end (exclusive) of the
  // burst that may go with it. Disabled or `hurry` (the next tick is due):
  // at once. The same as waiting until DueNs(next), then TakeBurst.
  // REQUIRES: next < packets of BeginFrame; calls in order of `next`.
  uint32_t WaitForBurst(uint32_t next, bool hurry = false);

  // For a loop that paces several streams and waits itself: when the burst
  // starting at packet `next` is due (INT64_MIN when pacing is off), and
  // the burst to send now, at or after that time, with the same re-planning
  // after a stall as WaitForBurst. WaitForSlot waits until DueNs(next).
  int64_t DueNs(uint32_t next) const;
  uint32_t TakeBurst(uint32_t next, bool hurry);
  void WaitForSlot(uint32_t next);

  int64_t SlotNs(uint32_t index) const;
  uint32_t burst_packets() const { return burst_; }
  int64_t spin_ns() const { return options_.spin_ns; }
  const PacerStats& stats() const { return stats_; }

 private:
  // Spreads packets [next, packets) over what is left of the window.
  void Squeeze(uint32_t next, int64_t now);

  Clock* clock_;
  Options options_;
  PacerStats stats_;
  // The plan: packet i's slot is base_ns_ + (i - base_index_) * span_ns_ /
  // (packets_ - base_index_).
  int64_t base_ns_ = 0, span_ns_ = 1, end_ns_ = 0;
  uint32_t base_index_ = 0, packets_ = 1, burst_ = 1;
  int64_t quantum_ns_ = 1;  // of this frame
};

}  // namespace tilestream
