// Whole-frame swap sync across the tiles of a wall (docs/control.md,
// "Swap sync"): receivers report each tick whose frame they have complete;
// the master (the streamer's coordinator) releases a tick for presentation
// once every taking-part tile has it, in tick order, or at the tick's
// deadline skips it on every tile (or, with the partial policy, has every
// tile show what it has). Receivers report when they showed a released
// tick; the spread of those times per tick is the skew.
//
// A tile that misses `drop_after` released ticks in a row (not complete at
// their deadline) is left out: the wall plays on without waiting for it (a
// display node whose link died silently, a stream that ended) until it
// reports a tick in time again, and takes part from the next tick opened
// after that. docs/control.md, "A display node that vanishes".
//
// Ticks are named on the wire by their RTP timestamp, which every tile of
// a tick shares. SwapSyncMaster is plain logic with the clock passed in, so
// it is tested without sockets; not thread-safe (the coordinator's thread).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/rtt_estimate.h"
#include "common/control/skew_histogram.h"

namespace tilestream {

enum class SyncDecision : uint8_t { kPresent = 0, kSkip = 1, kPartial = 2 };

struct SyncEvent {
  SyncDecision decision = SyncDecision::kPresent;
  uint64_t tick = 0;
  uint32_t timestamp = 0;
  // When to show it (CLOCK_REALTIME of the display nodes, synchronised):
  // a wall with a playout latency; 0: at once.
  int64_t at_ns = 0;
};

struct LeaderDecision;  // common/control/tick_leader.h

struct SyncStats {
  uint64_t presented = 0;     // released with every tile complete
  uint64_t skipped = 0;       // incomplete at the deadline, skip policy
  uint64_t partial = 0;       // incomplete at the deadline, partial policy
  uint64_t unmatched = 0;     // reports of a tick not waiting (late or unknown)
  uint64_t left_out = 0;      // times a tile was left out for missing ticks
  uint64_t led = 0;           // decided by the wall's leader (adopted)
  uint64_t abandoned = 0;     // skipped: the leader they were opened with went silent
  uint64_t skew_samples = 0;  // released ticks shown by two tiles or more
  int64_t skew_sum_ns = 0;
  int64_t skew_max_ns = 0;
  double skew_mean_ms() const { return skew_samples ? skew_sum_ns / 1e6 / skew_samples : 0; }
};

class SwapSyncMaster {
 public:
  // drop_after: misses in a row that leave a tile out (0: never).
  SwapSyncMaster(uint32_t tiles, bool partial_policy, uint32_t drop_after = 3);

  // Whether tile's receiver takes part (its node is connected). A tick is
  // released when every tile that took part when it opened, and still
  // does, has it (a node joining mid-stream waits for the next tick); with
  // none, the tick is dropped uncounted.
  void SetMember(uint32_t tile, bool member);
  bool member(uint32_t tile) const { return members_[tile]; }
  // A member left out for missing ticks (see above).
  bool left_out(uint32_t tile) const { return left_out_[tile]; }
  // Ticks released without tile taking part: its node not connected, or
  // the tile left out.
  uint64_t ticks_without(uint32_t tile) const { return ticks_without_[tile]; }
  // The tiles left out or taken back since the last call.
  struct Change {
    uint32_t tile = 0;
    bool left_out = false;  // else taken back
  };
  void TakeChanges(std::vector<Change>* out) { out->swap(changes_); }

  // A tick the clock just sent; decided at deadline_ns at the latest, and
  // shown at at_ns (see SyncEvent; 0: at once). `led`: decided by the
  // wall's leader (common/control/tick_leader.h), whose decision Adopt
  // takes; until then Decide waits for it, whatever the deadline.
  void OpenTick(uint64_t tick, uint32_t timestamp, int64_t deadline_ns, int64_t at_ns = 0,
                bool led = false);
  // The leader's decision of a tick opened `led`, counted as the master's
  // own, the tiles complete as the leader had them; false: no such tick
  // waits (a copy, or one abandoned).
  bool Adopt(const LeaderDecision& d);
  // How long after its deadline a led tick's decision may come (its way
  // from the leader); past that, LedOverdue.
  void SetLedGrace(int64_t grace_ns) { led_grace_ns_ = grace_ns; }
  int64_t led_grace_ns() const { return led_grace_ns_; }
  // Led ticks in a row the leader did not show although every tile taking
  // part had reported it complete here (to the master, the longer way):
  // the leader hears the nodes' reports no more (a LAN that does not carry
  // them), and the wall should be decided by the master.
  uint32_t unheard_in_a_row() const { return unheard_in_a_row_; }
  // Whether the first tick waiting is led, undecided, and the grace past
  // its deadline: its leader is silent (stopped, gone, cut off).
  bool LedOverdue(int64_t now_ns) const;
  // Every led tick still undecided is skipped (Decide releases them): the
  // leader they were opened with is no longer trusted to decide them, and
  // no other decides them in its place. How many.
  uint64_t AbandonLed();
  // Tile has tick `timestamp` complete (said again: ignored).
  // A report of a led tick already decided, that comes before its deadline
  // and grace (now_ns; its way to the master is longer than to the leader),
  // takes a tile left out back too, as the leader does.
  void Complete(uint32_t tile, uint32_t timestamp, int64_t now_ns = INT64_MAX);
  // Appends the decisions due at now_ns, in tick order.
  void Decide(int64_t now_ns, std::vector<SyncEvent>* out);
  // When Decide next has something to do at the latest (INT64_MAX:
  // nothing); for a led tick, when it is overdue.
  int64_t next_deadline_ns() const;
  // Tile showed released tick `timestamp` at shown_ns (CLOCK_REALTIME, so
  // that display nodes with synchronised clocks compare).
  void Shown(uint32_t tile, uint32_t timestamp, int64_t shown_ns);

  const SyncStats& stats() const { return stats_; }
  // Skews of ticks finished since the last call (for a line a second).
  int64_t TakeRecentMaxSkew();
  // The skews measured, for percentiles in the final report.
  const SkewHistogram& skews() const { return skews_; }

 private:
  struct Pending {
    uint64_t tick;
    uint32_t timestamp;
    int64_t deadline_ns;
    int64_t at_ns;
    std::vector<bool> members;  // at open
    std::vector<bool> complete;
    bool led = false;
    std::optional<SyncDecision> adopted;  // the leader's decision, or abandoned
  };
  struct Released {
    uint32_t timestamp;
    std::vector<bool> seen;  // per tile
    uint32_t shown = 0;
    int64_t first_ns = 0, last_ns = 0;
  };
  static constexpr size_t kMaxPending = 256;  // ticks awaiting a decision
  static constexpr size_t kMaxReleased = 64;  // ticks whose skew is being measured

  // The last timestamps a tile reported complete: its copies are dropped.
  struct RecentCompletes {
    std::array<uint32_t, 8> timestamps{};
    size_t next = 0, count = 0;
  };
  bool Reported(uint32_t tile, uint32_t timestamp);
  bool TakesPart(uint32_t t) const { return members_[t] && !left_out_[t]; }
  bool AllComplete(const Pending& p) const;
  bool AnyMember(const Pending& p) const;
  bool LaterTickHasMember() const;  // of the ticks pending after the first
  // Counts, per tile taking part in released tick p, the ticks missed in a
  // row, and leaves a tile out at drop_after.
  void CountMisses(const Pending& p);
  void LeaveOut(uint32_t tile, bool out);
  void Release(SyncDecision d, const Pending& p, std::vector<SyncEvent>* out);
  void FinishSkew(const Released& r);

  uint32_t tiles_;
  bool partial_;
  uint32_t drop_after_;
  std::vector<bool> members_;
  uint32_t member_count_ = 0;  // members, left out or not
  std::vector<bool> left_out_;
  uint32_t left_out_count_ = 0;
  std::vector<uint32_t> misses_;  // in a row, per tile
  std::vector<uint64_t> ticks_without_;
  std::vector<RecentCompletes> recent_complete_;
  std::vector<Change> changes_;
  std::deque<Pending> pending_;
  std::deque<Released> released_;
  struct LedDeadline {
    uint32_t timestamp = 0;
    int64_t deadline_ns = 0;  // 0: none
  };
  std::array<LedDeadline, 8> led_released_{};  // the last led ticks released, a ring
  size_t next_led_released_ = 0;
  SyncStats stats_;
  SkewHistogram skews_;
  int64_t recent_max_skew_ = 0;
  int64_t led_grace_ns_ = 0;
  uint32_t unheard_in_a_row_ = 0;
};

// The sync lines, receiver to master:  "complete TILE TIMESTAMP",
// "shown TILE TIMESTAMP REALTIME_NS"; master to receiver: "present TS TICK
// [AT_NS]", "skip TS TICK", "partial TS TICK [AT_NS]". Parsers take
// untrusted text: nullopt on anything malformed.
// Once a second a receiver also says per tile "stats TILE FRAMES LOST
// INCOMPLETE RTT_US RTTVAR_US REQUESTED LATE" (for the control channel's
// status): frames shown in the last second; so far, packets lost, frames
// incomplete, the round trip of its repairs and its deviation, packets
// asked for, retransmissions that came too late.
// The master measures each node's round trip on the connection: "ping NS"
// (its clock), answered at once with "pong NS". With a playout latency it
// says it: "latency NS".
struct TileRepairStats {
  uint64_t frames = 0, lost = 0, incomplete = 0;
  uint64_t rtt_us = 0, rttvar_us = 0, requested = 0, late = 0;
};
struct SyncReport {
  enum class Kind : uint8_t { kComplete = 0, kShown = 1, kStats = 2 };
  Kind kind = Kind::kComplete;
  uint32_t tile = 0;
  uint32_t timestamp = 0;
  int64_t shown_ns = 0;
  TileRepairStats stats;  // kStats
};
std::string FormatComplete(uint32_t tile, uint32_t timestamp);
std::string FormatShown(uint32_t tile, uint32_t timestamp, int64_t shown_ns);
std::string FormatStats(uint32_t tile, const TileRepairStats& stats);
std::optional<SyncReport> ParseSyncReport(std::string_view line);
std::string FormatSyncEvent(const SyncEvent& e);
std::optional<SyncEvent> ParseSyncEvent(std::string_view line);
std::string FormatPing(int64_t ns);
std::string FormatPong(int64_t ns);
// "WORD NS"; the master also says "latency NS", the wall's playout latency
// (whenever it changes, and to a node that joins), and "nack_copies N",
// how many copies of a lost packet's first request the tiles send (1 or 2,
// likewise).
std::string FormatStamp(std::string_view word, int64_t ns);
// The stamp of "WORD NS" (WORD: ping, pong, latency or nack_copies).
std::optional<int64_t> ParseStamp(std::string_view word, std::string_view line);
// "rtt NS VAR_NS": the round trip the master measured to the node, and its
// deviation, after each sample: a far node's repairs wait that long
// before they ask again, until they have measured their own.
std::string FormatRtt(const RttEstimate& rtt);
std::optional<RttEstimate> ParseRtt(std::string_view line);

}  // namespace tilestream
