// A long network path, in user space (testbed/pathline: the delay line the
// testbed puts between the streaming server and its switch, see
// docs/operations.md, "A wall far from its server"): what happens to each
// packet that crosses it, one direction at a time.
//
//   PathSpec: the path, from text such as
//     "rtt=20ms,jitter=2ms,loss=0.5%,reorder=1%,reorder_by=1ms,rate=5gbit"
//   PathModel: per packet, drop it or release it at a time.
//
// The model, per direction (out: from the server; in: to it):
// * delay: rtt / 2 each way (or `delay`, one way).
// * jitter: the delay varies as a normal distribution of deviation
//   `jitter`, cut at 3 deviations (and at no delay): samples drawn every
//   `jitter_period` (at least 6 deviations) and blended in between, so it
//   changes smoothly, as a path's queues do against a packet's spacing.
//   Packets keep their order (a queue is first in, first out): one is never
//   released before the one that came before it (with the period at 6
//   deviations the delay never falls fast enough for that to hold one back).
// * loss: each UDP datagram independently, with probability `loss` (TCP
//   too with `tcp_loss`: the swap sync and control travel on TCP, whose
//   tail-loss probe costs two round trips; docs/decisions.md).
// * burst: `burst` UDP datagrams in a row, out, to `burst_to` (an IPv4
//   address; any if unset) from `burst_at` after the start.
// * reorder: a UDP datagram, with probability `reorder`, is held a further
//   uniform (0, reorder_by]; later packets pass it.
// * rate: the out direction's bytes leave no faster than `rate` bit/s (a
//   token bucket of one packet): what a path's bottleneck does.
//
// Plain logic with the time passed in and a seeded generator, so it is
// tested without a network. Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "common/base/result.h"

namespace tilestream {

struct PathSpec {
  int64_t delay_ns = 0;  // one way
  int64_t jitter_ns = 0;
  int64_t jitter_period_ns = 0;  // 0: 6 x jitter
  double loss = 0;               // 0..1
  bool tcp_loss = false;
  uint32_t burst = 0;
  int64_t burst_at_ns = 0;
  std::optional<uint32_t> burst_to;  // IPv4, host order
  double reorder = 0;                // 0..1
  int64_t reorder_by_ns = 1'000'000;
  double rate_bps = 0;  // 0: no cap
  uint64_t seed = 1;

  std::string Describe() const;
};

// "key=value,..." with durations in ns/us/ms/s, shares in % (or a
// fraction), rates in bit/kbit/mbit/gbit. Keys: rtt, delay, jitter,
// jitter_period, loss, tcp_loss (yes/no), burst, burst_at, burst_to,
// reorder, reorder_by, rate, seed. Untrusted text: every value is checked
// and bounded; the error names the key.
Result<PathSpec> ParsePathSpec(std::string_view text);

enum class Direction : uint8_t { kOut = 0, kIn = 1 };

struct PacketInfo {
  Direction direction = Direction::kOut;
  bool udp = false;
  uint32_t destination = 0;  // IPv4, host order
  uint32_t bytes = 0;
};

struct PathVerdict {
  bool drop = false;
  bool reordered = false;  // held past later packets
  int64_t release_ns = 0;
};

struct PathCounts {
  uint64_t packets = 0, bytes = 0;
  uint64_t lost = 0, burst_lost = 0, reordered = 0;
};

class PathModel {
 public:
  PathModel(const PathSpec& spec, int64_t start_ns);

  // A packet that arrived at now_ns.
  PathVerdict Judge(const PacketInfo& p, int64_t now_ns);

  const PathCounts& counts(Direction d) const { return way_[static_cast<int>(d)].counts; }

 private:
  struct Way {
    int64_t last_release_ns = 0;  // of the packets in order
    int64_t period_start_ns = 0;
    double from = 0, to = 0;  // the jitter's samples (deviations) at the period's ends
    PathCounts counts;
  };
  int64_t Delay(Way& w, int64_t now_ns);
  bool Lose(const PacketInfo& p, Way& w);

  PathSpec spec_;
  int64_t start_ns_;
  int64_t now_ns_ = 0;
  uint32_t burst_left_;
  Way way_[2];
  std::mt19937_64 random_;
  std::uniform_real_distribution<double> unit_{0.0, 1.0};
  std::normal_distribution<double> normal_{0.0, 1.0};
};

}  // namespace tilestream
