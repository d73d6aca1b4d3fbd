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
