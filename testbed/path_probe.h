// Measures a path from outside (testbed/pathline probe and echo): the probe
// sends numbered UDP datagrams stamped with CLOCK_MONOTONIC at a set rate
// and size; the echo, at the far end, sends back each one's first bytes
// stamped with its own arrival. The testbed's namespaces share one kernel's
// clock, so each direction's delay is measured apart: percentiles of each,
// what was lost, what came out of order, and the rate that arrived.
//
// Bounded: a probe sends `count` datagrams and waits `linger_ns` for the
// last answers; an echo answers for `seconds`. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "common/base/result.h"

namespace tilestream {

struct ProbeOptions {
  std::string to;  // the echo's ADDRESS:PORT
  uint64_t count = 1000;
  double rate_bps = 8e6;  // of datagrams of `bytes`
  uint32_t bytes = 1000;  // each (32 .. 65000)
  int64_t linger_ns = 2'000'000'000;
};

// The measurement as JSON: sent, answered, out and back delay percentiles
// (us), reordered (answers that came after a later one), the rate at the
// echo (Gbit/s).
Result<std::string> RunProbe(const ProbeOptions& options);

// Answers probes on `port` for `seconds`, then returns.
Status RunEcho(uint16_t port, double seconds);

}  // namespace tilestream
