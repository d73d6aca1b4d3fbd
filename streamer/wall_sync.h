// The coordinator's turn of the swap sync (docs/control.md): each tick sent
// is opened with its deadline and, with a playout latency, the moment every
// tile shows it; the decisions go to the display nodes as they fall due;
// a tile left out for missing ticks, or taken back, is logged; and the
// playout latency follows the round trips that the control server and the
// tiles measure (common/control/playout_latency.h), the nodes told when it
// changes. Not thread-safe: the coordinator's thread.
#pragma once

#include <cstdint>
#include <vector>

#include "common/control/playout_latency.h"
#include "common/control/swap_sync.h"
#include "common/wall/wall_config.h"

namespace tilestream {

class ControlServer;

class WallSync {
 public:
  // A tile that misses this many ticks in a row is left out of the sync
  // until it reports in time again (common/control/swap_sync.h).
  static constexpr uint32_t kDropAfter = 3;
  // Led ticks in a row skipped by a leader that did not hear what the
  // coordinator did, before the coordinator decides for the rest of the show.
  static constexpr uint32_t kUnheard = 3;

  explicit WallSync(const WallConfig& c);

  // What the control server feeds with the nodes' reports.
  SwapSyncMaster& master() { return master_; }
  const SwapSyncMaster& master() const { return master_; }
  // Where decisions and the latency go: set once the server is open.
  void Attach(ControlServer* server) { server_ = server; }

  // A tick whose frames are all out at frame_end_ns (CLOCK_MONOTONIC):
  // opened with the sync (if enabled); its deadline (a leader's: when its
  // decision may come at the latest).
  int64_t OpenTick(uint64_t tick, uint32_t timestamp, int64_t frame_end_ns);
  // The decisions due at now_ns, sent; membership changes logged.
  void Decide(int64_t now_ns);
  // The play is over and every tick's deadline (a led one's grace too) has
  // passed: a led tick whose decision has not come is counted abandoned,
  // as when its leader is given up, so that every tick opened is counted.
  void Finish(int64_t now_ns);
  int64_t next_deadline_ns() const { return master_.next_deadline_ns(); }

  // The latency after the round trips measured by now, and the wall's
  // datagrams sent in all and sent again so far; said to the nodes (and
  // logged) the first time and whenever it changes. REQUIRES: attached.
  void UpdateLatency(uint64_t sent = 0, uint64_t sent_again = 0);
  // The playout latency in use; 0 without one.
  int64_t latency_ns() const { return latency_.timed() ? latency_.latency_ns() : 0; }
  bool timed() const { return latency_.timed(); }

 private:
  void LogChanges();
  // The latency from the round trips measured by now (UpdateLatency less
  // the counts).
  void RefreshLatency();

  const WallConfig& c_;
  SwapSyncMaster master_;
  PlayoutLatency latency_;
  ControlServer* server_ = nullptr;
  bool latency_said_ = false;
  int copies_said_ = 1;    // of a first request ("nack_copies")
  int64_t logged_ns_ = 0;  // the latency last logged
  std::vector<SyncEvent> events_;
  std::vector<SwapSyncMaster::Change> changes_;
};

}  // namespace tilestream
