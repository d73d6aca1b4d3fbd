// A display node's swap sync decisions as its presenter takes them
// (docs/control.md, "Playout latency"): one with a moment waits for it,
// in the order they came; one without a moment (no playout latency), a
// skip, or one further ahead than any latency (clocks seconds apart) is
// shown at once, and so is the oldest held once kMaxTimed are. A decision
// that came after its moment is counted, and shown as soon as it can be.
// The receiver's presenter and the wall's simulation both drive it;
// waking at the moment is theirs. Plain logic; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>

#include "common/control/swap_sync.h"

namespace tilestream {

class PresentSchedule {
 public:
  static constexpr size_t kMaxTimed = 64;
  static constexpr int64_t kMaxAheadNs = 11'000'000'000;  // sync.latency_ms is at most 10 s
  static constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

  // Decision `e` came at `now_ns` (the clock its moments are of). Returns
  // the one to act on now, if any: `e` itself, or the oldest held.
  std::optional<SyncEvent> Take(const SyncEvent& e, int64_t now_ns);
  // The moment of the next held decision (kNever: none), and taking it.
  int64_t next_at_ns() const { return timed_.empty() ? kNever : timed_.front().at_ns; }
  SyncEvent TakeNext();  // REQUIRES: next_at_ns() != kNever

  // Decisions that came after their moment, and by how much at most.
  uint64_t late() const { return late_; }
  int64_t late_max_ns() const { return late_max_ns_; }

 private:
  std::deque<SyncEvent> timed_;
  uint64_t late_ = 0;
  int64_t late_max_ns_ = 0;
};

}  // namespace tilestream
