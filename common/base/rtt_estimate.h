// A smoothed round-trip time and its mean deviation, as TCP keeps them
// (RFC 6298: gains 1/8 and 1/4), but the first sample sets no deviation:
// RFC 6298 starts it at half the round trip, right for a retransmission
// timer, while here the estimate plans a playout latency, which only rises
// and would keep that guess for good. Plain value; not thread-safe.
#pragma once

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

}  // namespace tilestream
