// A smoothed round-trip time and its mean deviation, as TCP keeps them
// (RFC 6298: gains 1/8 and 1/4), but the first sample sets no deviation:
// RFC 6298 starts it at half the round trip, right for a retransmission
// timer, while here the estimate plans a playout latency, which only rises
// and would keep that guess for good. Plain value; not thread-safe.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace tilestream {

struct RttEstimate {
  int64_t rtt_ns = 0;     // 0 until the first sample
  int64_t rttvar_ns = 0;  // mean deviation
  uint64_t samples = 0;

  void Sample(int64_t ns) {
    if (ns <= 0) return;
    if (samples++ == 0) {
      rtt_ns = ns;
      return;
    }
    const int64_t deviation = ns > rtt_ns ? ns - rtt_ns : rtt_ns - ns;
    rttvar_ns += (deviation - rttvar_ns) / 4;
    rtt_ns += (ns - rtt_ns) / 8;
  }
};

// The same, for samples that come in bursts: the repairs of one frame's
// lost packets, all answered within a few milliseconds, see the path as
// it is at that moment, and Sample's deviation fell to nothing over the
// burst; the next frame's, a path's wander later, were asked for again
// too soon (on a 10 ms path with 5 ms of jitter 20% of the lost packets
// were asked for twice, where 4% of first rounds fail). As Linux keeps
// TCP's (tcp_rtt_estimator's mdev_max), the deviation used rises at once
// and falls once a round trip, a quarter of the way to the largest of
// that round trip.
struct BurstyRttEstimate {
  void Sample(int64_t ns, int64_t now_ns) {
    if (ns <= 0) return;
    smooth_.Sample(ns);
    mdev_max_ns_ = std::max(mdev_max_ns_, smooth_.rttvar_ns);
    rttvar_ns_ = std::max(rttvar_ns_, mdev_max_ns_);  // up at once
    if (now_ns < window_end_ns_) return;
    rttvar_ns_ -= (rttvar_ns_ - mdev_max_ns_) / 4;  // down once a round trip
    mdev_max_ns_ = 0;
    window_end_ns_ = now_ns + smooth_.rtt_ns;
  }
  RttEstimate estimate() const { return {smooth_.rtt_ns, rttvar_ns_, smooth_.samples}; }

 private:
  RttEstimate smooth_;  // its deviation, sample by sample
  int64_t rttvar_ns_ = 0, mdev_max_ns_ = 0, window_end_ns_ = 0;
};

// How long after asking for a lost packet to ask again, from the round
// trip to its sender: the round trip, two deviations or an eighth of it
// (a first sample has no deviation; RIST asks again after 1.1 round
// trips), and 2 ms for the machines' wake-ups. The repairs' schedule
// (common/receive/loss_tracker.h) and the playout latency's budget for
// them (common/control/playout_latency.h) both take it from here.
inline int64_t RetryAfterNs(int64_t rtt_ns, int64_t rttvar_ns) {
  constexpr int64_t kWakeUpsNs = 2'000'000;
  return kWakeUpsNs + rtt_ns + std::max(rtt_ns / 8, 2 * rttvar_ns);
}

// An estimate one thread sets and others read, each value on its own
// (relaxed): a hint, not a measurement to compute with.
struct SharedRtt {
  std::atomic<int64_t> rtt_ns{0}, rttvar_ns{0};
  void Set(const RttEstimate& r) {
    rtt_ns.store(r.rtt_ns, std::memory_order_relaxed);
    rttvar_ns.store(r.rttvar_ns, std::memory_order_relaxed);
  }
};

}  // namespace tilestream
