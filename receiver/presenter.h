// The main thread's turn of a display node: with swap sync, shows each tick
// the coordinator releases on every tile of the node at once and says when;
// without it, shows each tile's newest frame as it comes. Handles the
// window's keys (the overlay, commands to the coordinator, quit). Runs on
// the thread that owns the windows (SDL and OpenGL stay there).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/control/swap_sync.h"
#include "receiver/node_setup.h"

namespace tilestream {

struct PresentCounts {
  uint64_t presented = 0, partial = 0, skipped = 0;
  uint64_t missing = 0;  // tile frames released but not here
  uint64_t window_updates = 0;
  uint64_t last_tick = 0;
  uint64_t shown_ticks() const { return presented + partial; }
};

class Presenter {
 public:
  Presenter(NodeParts* parts, bool overlay);

  // One turn: the sync's lines, the window's events, drawing; waits a
  // little where nothing else paces the loop. False when the window asked
  // to quit.
  bool Turn();

  // The overlay text of tile k (shown while the overlay is on).
  void SetOverlayText(size_t k, std::string text);

  const PresentCounts& counts() const { return counts_; }

 private:
  void Present(const SyncEvent& e);
  bool HandleWindowEvents();
  void ShowNewFrames();
  void Repaint();
  bool DueForRepaint() const;

  NodeParts& p_;
  bool overlay_;
  std::vector<std::string> overlay_text_;
  std::vector<SyncEvent> events_;
  std::vector<bool> got_;
  int64_t last_draw_ns_ = 0;
  PresentCounts counts_;
};

}  // namespace tilestream
