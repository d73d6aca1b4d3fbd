// The main thread's turn of a display node: with swap sync, shows each tick
// the coordinator releases on every tile of the node at once and says when;
// without it, shows each tile's newest frame as it comes. Handles the
// window's keys (the overlay, commands to the coordinator, quit). Runs on
// the thread that owns the windows (SDL and OpenGL stay there).
//
// With swap sync that thread runs at SCHED_FIFO within a budget where
// permitted (common/base/realtime.h): every node acts on a release the
// moment it arrives instead of after its busy network threads' turn, which
// is what the wall's skew is made of (docs/decisions.md, "Display nodes act
// on the sync at real-time priority").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/base/realtime.h"
#include "common/control/present_schedule.h"
#include "common/control/swap_sync.h"
#include "receiver/node_setup.h"

namespace tilestream {

struct PresentCounts {
  uint64_t presented = 0, partial = 0, skipped = 0;
  uint64_t missing = 0;  // tile frames released but not here
  uint64_t window_updates = 0;
  uint64_t last_tick = 0;
  bool real_time = false;            // the presenter ran at SCHED_FIFO
  uint64_t windows_over_budget = 0;  // 100-ms windows it served at normal priority
  // With a playout latency: decisions that came after their moment (shown
  // at once, out of step: the latency's margin was short), by how much at
  // most, and how late the presenter woke for one at most (the CPU).
  uint64_t late_decisions = 0;
  int64_t late_decision_max_ns = 0, woke_late_max_ns = 0;
  // Decisions by the way that brought them first (receiver/sync_client.h).
  uint64_t decisions_by_datagram = 0, decisions_by_tcp = 0, decisions_by_lan = 0;
  // Leading (decided at the wall's side): ticks decided, and skipped for
  // coming to them after their moment.
  uint64_t ticks_led = 0, led_late = 0;
  uint64_t shown_ticks() const { return presented + partial; }
};

class Presenter {
 public:
  // sync_priority: the SCHED_FIFO priority with swap sync (0: none).
  // Threads started after this inherit it: start them first.
  Presenter(NodeParts* parts, bool overlay, int sync_priority);

  // One turn: the sync's lines, the window's events, drawing; waits a
  // little where nothing else paces the loop. False when the window asked
  // to quit.
  bool Turn();

  // The overlay text of tile k (shown while the overlay is on).
  void SetOverlayText(size_t k, std::string text);

  const PresentCounts& counts() const { return counts_; }
  // Tile k's pixels as last shown (valid until the presenter's next turn);
  // null before its first frame.
  const std::byte* shown(size_t k) const { return shown_[k]; }

 private:
  void RaisePriority(int priority);
  void WaitForSync(int timeout_ms);
  int WaitMs(int most_ms) const;
  void PresentDue();
  void Present(const SyncEvent& e);
  bool HandleWindowEvents();
  void ShowNewFrames();
  void Repaint();
  bool DueForRepaint() const;

  NodeParts& p_;
  bool overlay_;
  std::vector<std::string> overlay_text_;
  std::vector<SyncEvent> events_;
  // Decisions waiting for their time (a playout latency), in tick order.
  static constexpr int64_t kSleepAheadNs = 2'000'000;
  PresentSchedule schedule_;  // the decisions waiting for their moment
  std::vector<bool> got_;
  std::vector<const std::byte*> shown_;
  int64_t last_draw_ns_ = 0;
  PresentCounts counts_;
  std::optional<RealTimeBudget> priority_;  // with swap sync, where permitted
};

}  // namespace tilestream
