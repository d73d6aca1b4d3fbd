// A smoothed round-trip time and its mean deviation, as TCP keeps them
// (RFC 6298: gains 1/8 and 1/4, the first sample sets both). Plain value;
// not thread-safe.
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
      rttvar_ns = ns / 2;
      return;
    }
    const int64_t deviation = ns > rtt_ns ? ns - rtt_ns : rtt_ns - ns;
    rttvar_ns += (deviation - rttvar_ns) / 4;
    rtt_ns += (ns - rtt_ns) / 8;
  }
};

}  // namespace tilestream
