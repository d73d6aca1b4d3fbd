// The wall's playout latency (docs/control.md, "Playout latency"; the
// decision in docs/decisions.md, "A wall far from its server"): with
// [sync] latency_ms set, every tile shows a tick `latency` after its frame
// has been sent whole, at one moment of the display nodes' synchronised
// clocks, and the coordinator decides the tick early enough for the
// decision to reach the farthest node first.
//
// From the round trip measured on the nodes' sync connections (the
// largest, s, and its deviation, sv) and the one the tiles measure from
// asking for a lost packet to its arrival (the largest, r, and rv; s and
// sv until a tile has measured one):
//   margin  = s / 2 + 2 sv + 5 ms: a decision's way to a node, and the
//             coordinator's and the node's wake-ups on a loaded machine;
//   repair  = RetryAfterNs(r, rv) (common/base/rtt_estimate.h): one
//             request answered, as the tiles' repairs wait for it;
//   auto    = s / 2 + reorder + 2 repair + s / 2 + margin: the last
//             packets' way, the wait before a packet found missing is asked
//             for (`stream.reorder_ms`), two requests answered (the second
//             for an answer lost on the way),
//             the report's way back, the decision's out; at most
//             max_latency_ms. On a path where answers take the round trip,
//             3.5 round trips (SRT's guide asks 3 at up to 1% loss, 4 at 3%);
//             never under one frame interval, the slack a wall without a
//             latency has after a frame is sent (a node that assembles and
//             reports slowly, short of any round trip, still makes it).
//   deadline = frame end + latency - margin, the margin at most half the
//             latency (a stalled node's round trip must not take the
//             repairs' time from every tile), no earlier than the frame end.
// An auto latency rises at once when the path asks for more. It falls
// when the path has improved, with hysteresis: once what the round trips
// ask for has stayed under it by a tenth (and 5 ms) for kCalmUpdates
// updates in a row (a second each), it steps down towards that, by at
// most kFallNs an update (an eighth of a frame interval at most), so
// that each step shows one tick that much early, never a tick before the
// one before it. Until a round trip is measured it is the maximum. Plain
// logic; not thread-safe (the coordinator's thread).
#pragma once

#include <cstdint>

#include "common/wall/wall_config.h"

namespace tilestream {

class PlayoutLatency {
 public:
  // reorder_ns: how long a tile waits before it asks for a packet found
  // missing (`stream.reorder_ms`).
  PlayoutLatency(const SyncSettings& s, int64_t interval_ns, int64_t reorder_ns = 0)
      : settings_(s), interval_ns_(interval_ns), reorder_ns_(reorder_ns) {}

  // The largest round trip on the sync connections now and its deviation,
  // and the largest a tile measured for a repair and its deviation (0:
  // none measured).
  void Update(int64_t sync_ns, int64_t sync_var_ns, int64_t repair_ns = 0,
              int64_t repair_var_ns = 0);

  bool timed() const { return settings_.timed(); }
  int64_t latency_ns() const;
  int64_t margin_ns() const { return margin_ns_; }
  // For a tick whose frame is sent whole at frame_end_ns: when it is shown
  // and when it is decided at the latest (same clock as frame_end_ns).
  int64_t PresentAt(int64_t frame_end_ns) const { return frame_end_ns + latency_ns(); }
  int64_t DeadlineFor(int64_t frame_end_ns) const;
  // Both for a tick the clock opens, with or without a latency: without,
  // decided a deadline after its frame (`[sync] deadline_ms`, else a frame
  // interval) and shown as decided (at_ns 0). The coordinator and the
  // wall's simulation open their ticks with it.
  struct TickMoments {
    int64_t deadline_ns = 0;
    int64_t at_ns = 0;
  };
  TickMoments MomentsFor(int64_t frame_end_ns) const;

 private:
  static constexpr int64_t kSlackNs = 5'000'000;
  static constexpr int kCalmUpdates = 5;
  static constexpr int64_t kFallNs = 2'000'000;
  SyncSettings settings_;
  int64_t interval_ns_;
  int64_t reorder_ns_;
  int64_t auto_ns_ = 0;  // 0: nothing measured yet
  int calm_ = 0;         // updates in a row that asked for well under auto_ns_
  int64_t margin_ns_ = kSlackNs;
};

}  // namespace tilestream
