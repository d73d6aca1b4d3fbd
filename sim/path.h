// The network of the simulated wall: per display node a path from the
// server and one back, each with delay, jitter, random and burst loss of
// datagrams, reordering and duplicates, loss of TCP segments, and times it
// is down; and the sync
// connection over it as TCP delivers it: in order, a lost segment holding
// back every later one until a tail-loss probe or a retransmission timeout
// repairs it, as Linux does (RFC 8985's probe after two smoothed round
// trips, then RFC 6298's timeout, at least 200 ms, doubling).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "sim/event_queue.h"

namespace tilestream::sim {

struct PathSettings {
  int64_t one_way_ns = 50'000;  // a LAN's
  int64_t jitter_ns = 0;        // the deviation of a normal, smooth in time, cut at 3
  double loss = 0;              // of UDP datagrams, at random
  double tcp_loss = 0;          // of TCP segments, at random
  double reorder = 0;           // of datagrams: held back by up to reorder_by_ns more
  int64_t reorder_by_ns = 0;
  double duplicate = 0;  // of datagrams: arrive twice
  // Down over [first, second): every datagram and segment lost.
  std::vector<std::pair<int64_t, int64_t>> down;
  // At `first`, the next `second` datagrams lost.
  std::vector<std::pair<int64_t, uint32_t>> bursts;
};

// One direction of one path.
class Path {
 public:
  Path(const PathSettings& s, uint64_t seed) : s_(s), rng_(seed) {}

  bool down(int64_t now) const;
  // Whether it was down at any time in [from, to).
  bool DownBetween(int64_t from, int64_t to) const;
  // Whether one datagram sent now is lost on the way.
  bool LoseDatagram(int64_t now);
  bool LoseSegment(int64_t now) { return down(now) || rng_.Chance(s_.tcp_loss); }
  // How much later than the rest of its batch one datagram arrives (0: in
  // order), and whether it arrives twice.
  int64_t ReorderNs() {
    return s_.reorder > 0 && rng_.Chance(s_.reorder)
               ? 1 + static_cast<int64_t>(rng_.Uniform() * static_cast<double>(s_.reorder_by_ns))
               : 0;
  }
  bool Duplicate() { return s_.duplicate > 0 && rng_.Chance(s_.duplicate); }
  // When something sent now arrives, in order with what went before.
  int64_t ArrivalNs(int64_t now);
  int64_t one_way_ns() const { return s_.one_way_ns; }
  static constexpr int64_t kLeastNs = 10'000;  // a way's least, with jitter
  uint64_t lost() const { return lost_; }

 private:
  PathSettings s_;
  Rng rng_;
  double jitter_ = 0;  // in deviations, smoothed
  int64_t last_jitter_update_ = 0;
  int64_t last_arrival_ = 0;
  size_t burst_ = 0;         // the next burst of s_.bursts
  uint32_t burst_left_ = 0;  // datagrams left of the burst under way
  uint64_t lost_ = 0;
};

// Lines over TCP on a Path, delivered in order.
class TcpStream {
 public:
  TcpStream(EventQueue* q, Path* path, std::function<void(const std::string&)> deliver)
      : q_(q), path_(path), deliver_(std::move(deliver)) {}
  void Send(std::string line);
  uint64_t probes() const { return probes_; }
  uint64_t timeouts() const { return timeouts_; }

 private:
  // When the segment sent at `sent_ns` gets through, with its repairs.
  int64_t Through(int64_t sent_ns);

  EventQueue* q_;
  Path* path_;
  std::function<void(const std::string&)> deliver_;
  int64_t last_delivery_ = 0;
  uint64_t probes_ = 0, timeouts_ = 0;
};

}  // namespace tilestream::sim
