// The wall's playout latency (docs/control.md, "Playout latency"; the
// decision in docs/decisions.md, "A wall far from its server"): with
// [sync] latency_ms set, every tile shows a tick `latency` after its frame
// has been sent whole, at one moment of the display nodes' synchronised
// clocks, and the coordinator decides the tick early enough for the
// decision to reach the farthest node first.
//
// From the round trip measured on the nodes' sync connections (the
// largest, s, and its deviation, sv) and the one each tile measures from
// asking for a lost packet to its arrival (r and its deviation rv; s and
// sv until a tile has measured one):
//   margin  = s / 2 + 2 sv + 5 ms: a decision's way to a node, and the
//             coordinator's and the node's wake-ups on a loaded machine;
//   repair  = the largest over the tiles of RetryAfterNs(r, rv)
//             (common/base/rtt_estimate.h): one request answered, as the
//             tiles' repairs wait for it (each tile's own r and rv: the
//             largest r of one tile with the largest rv of another waited
//             for a path no tile has, 2-4 ms a round at 60 fps);
//   auto    = s / 2 + reorder + n repair + s / 2 + margin: the last
//             packets' way, the wait before a packet found missing is asked
//             for (`stream.reorder_ms`), n requests answered (the others
//             for a request or an answer lost on the way), the report's way
//             back, the decision's out; at most max_latency_ms. n follows
//             the share p of its first sends the wall lost (the receivers'
//             gaps) and the packets a tick sends, N (SetSent, and the ticks
//             opened): a first request fails when it or its answer is lost
//             (2p); a request asked again goes twice, each copy answered,
//             and fails when both do ((2p)^2); n is the least, from 2 to
//             5, that leaves p N (2p)^(2n-1) under one tick in 10,000 with
//             a packet unrepaired: for the 2x2 wall of 2560x1600 tiles
//             (5,600 packets a tick) 2 below 0.7% loss, 3 below 2.9%, 4
//             below 5.9%, then 5; 3 until measured (the first second).
//             Where sending the first request twice too (p N (2p)^(2n))
//             saves a round, and its cost (2p of the bytes sent again)
//             is at most half of `stream.retransmission_share` (the rest
//             for the retries and bursts), first_copies() is 2: the
//             coordinator tells the receivers ("nack_copies 2"). The 2x2
//             wall at 1% then waits for 2 repairs, not 3; at 2% doubling
//             saves none and costs 4%: single (docs/decisions.md, "A
//             first request goes twice where that saves a round"). With a
//             request asked again going once, n = 3 at 2% left a lost
//             packet unrepaired once in 16,000, and the 2x2 wall (110
//             lost a tick) skipped a tick in 140 on the 16-core machine.
//             On a path where answers take the round trip, 3.5 round
//             trips with 2, 4.6 with 3 (SRT's guide asks 3 at up to 1%
//             loss, 4 at 3%, and has no sync's round trip to spend); never
//             under one frame interval, the slack a wall without a latency
//             has after a frame is sent (a node that assembles and reports
//             slowly, short of any round trip, still makes it).
// Decided at the wall's side (common/control/tick_leader.h), the report
// and the decision cross the nodes' LAN instead: margin = 5 ms (the
// wake-ups), and auto = s / 2 + reorder + n repair + margin.
//   deadline = frame end + latency - margin, the margin at most half the
//             latency (a stalled node's round trip must not take the
//             repairs' time from every tile), no earlier than the frame end.
// An auto latency rises at once when the path asks for more, up to the
// maximum. It falls when the path has improved, with hysteresis: once
// what the round trips ask for has stayed under it by a tenth (and 5 ms)
// for kCalmUpdates updates in a row (a second each), it falls towards
// that ask and a tenth, a sixteenth of a frame interval each tick opened
// (MomentsFor): each tick is shown that much early, never before the one
// before it, and a second falls 62 ms at any rate (a start that asked
// for the maximum, 500 ms, settles on a 40 ms path's 200 within
// seconds; at 2 ms a second, before, it kept the maximum through a
// 20-s play). Until a round trip is measured it is the maximum. Plain
// logic; not thread-safe (the coordinator's thread).
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/base/rtt_estimate.h"
#include "common/wall/wall_config.h"

namespace tilestream {

// The longest a tile waits for a repair before it asks again: over the
// tiles that measured a repair's round trip, RetryAfterNs of each one's
// own round trip and deviation (what PlayoutLatency::Update takes).
struct LongestRepairWait {
  int64_t ns = 0;  // 0: no tile measured one
  void Tile(int64_t rtt_ns, int64_t rttvar_ns) {
    if (rtt_ns > 0) ns = std::max(ns, RetryAfterNs(rtt_ns, rttvar_ns));
  }
};

class PlayoutLatency {
 public:
  // reorder_ns: how long a tile waits before it asks for a packet found
  // missing (`stream.reorder_ms`).
  // repair_share: the most of a stream's bytes that may be sent again
  // (`stream.retransmission_share`).
  PlayoutLatency(const SyncSettings& s, int64_t interval_ns, int64_t reorder_ns = 0,
                 double repair_share = 0.05)
      : settings_(s),
        interval_ns_(interval_ns),
        reorder_ns_(reorder_ns),
        repair_share_(repair_share) {}

  // The largest round trip on the sync connections now and its deviation,
  // and the longest a tile waits for a repair before it asks again
  // (LongestRepairWait; 0: none measured).
  void Update(int64_t sync_ns, int64_t sync_var_ns, int64_t repair_wait_ns = 0);
  // Whether the ticks are decided at the wall's side (a leader node), for
  // the next Update and the ticks opened after it.
  void SetDecidedAtWall(bool at_wall) { at_wall_ = at_wall; }
  bool decided_at_wall() const { return at_wall_; }

  // The wall's packets sent in all and sent again (repairs), and those
  // the receivers found missing (lost, not reordered), totals since the
  // start, before each Update: the share of the first sends lost since the
  // last call and the first sends a tick (over the ticks MomentsFor opened
  // since), both smoothed (an eighth a call; the first taken whole), set
  // how many repairs the latency waits for and whether a first request
  // goes twice. Lost, not sent again: a first request sent twice has
  // every lost packet sent again twice.
  void SetSent(uint64_t sent, uint64_t sent_again, uint64_t lost);
  double lost_share() const { return share_; }
  int repair_rounds() const { return Rounds(first_copies()); }
  // How many copies of a lost packet's first request the tiles send: 2
  // where that saves a repair round within the budget, else 1.
  int first_copies() const;

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
  // wall's simulation open their ticks with it. A tick opened with `auto`
  // before any round trip was measured pins the maximum: from then on it
  // falls as a measured one does, tick by tick. Dropped at once, the
  // ticks opened after it were due before it, and decisions go in order:
  // the simulation's swarm had them reach the nodes 300 ms late.
  struct TickMoments {
    int64_t deadline_ns = 0;
    int64_t at_ns = 0;
  };
  TickMoments MomentsFor(int64_t frame_end_ns);

 private:
  static constexpr int64_t kSlackNs = 5'000'000;
  static constexpr int kCalmUpdates = 5;
  static constexpr int64_t kFallShare = 16;  // of a frame interval, a tick at most
  static constexpr double kSkipped = 1e-4;   // of the ticks, for a packet the rounds left lost
  static constexpr int kFirstRounds = 3, kMostRounds = 5;
  int Rounds(int first_copies) const;
  SyncSettings settings_;
  int64_t interval_ns_;
  int64_t reorder_ns_;
  double repair_share_;
  int64_t auto_ns_ = 0;     // 0: nothing measured yet
  int64_t fall_to_ns_ = 0;  // where the ticks opened take auto_ns_ down to
  int calm_ = 0;            // updates in a row that asked for well under auto_ns_
  int64_t margin_ns_ = kSlackNs;
  bool at_wall_ = false;
  uint64_t sent_ = 0, sent_again_ = 0, lost_ = 0;  // at the last SetSent
  uint64_t ticks_ = 0, ticks_at_sent_ = 0;  // opened (MomentsFor): in all, at the last SetSent
  double share_ = 0;                        // p: of the first sends, lost
  double packets_per_tick_ = 0;             // the wall's first sends, smoothed as share_ is
  bool share_measured_ = false;
};

}  // namespace tilestream
