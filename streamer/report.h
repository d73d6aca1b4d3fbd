// The streamer's statistics as people and scripts read them: a line per
// second while running, and a final report with one line per stream in the
// spirit of nuttcp plus the aggregate, as text and as JSON. No MPI here.
#pragma once

#include <string>
#include <vector>

#include "common/control/swap_sync.h"
#include "common/wall/wall_config.h"
#include "streamer/messages.h"
#include "streamer/rank_plan.h"
#include "streamer/streamer_options.h"

namespace tilestream {

struct StreamSummary {
  std::string tile;  // "r0c1"
  std::string nic;   // it streams from now (NIC failover may have moved it)
  uint32_t nic_moves = 0;
  std::string host;  // where its rank ran
  double mbps = 0;
  double cpu_percent = 0;
  double disk_mbytes_per_s = 0;
  uint64_t send_errors = 0;     // datagrams the kernel refused
  RefusalCounts refusals;       // of them, by errno
  uint64_t refused_resent = 0;  // refused once, sent when tried again: not lost
  uint64_t frames = 0, late_frames = 0, skipped_ticks = 0, held_frames = 0, missed_frames = 0;
  uint64_t ticks_seen_late = 0;  // TileStats
  uint64_t packets = 0, bytes = 0;
  uint64_t nacks = 0, retransmitted = 0, retransmitted_bytes = 0, refused_old = 0, refused_cap = 0,
           borrowed = 0;                         // retransmission (common/send/tile_sender.h)
  uint64_t send_syscalls = 0, pacer_sleeps = 0;  // per frame: what a frame costs in wake-ups
};

// The counters gathered between `before` and `now` (the rates of a second).
TileStats Delta(const TileStats& now, const TileStats& before);

// Rates of one tile over `elapsed_ns` from counters (or counter deltas).
StreamSummary Summarize(const TileStats& s, const WallConfig& config);

// "  3.0 s  15 streams  31.84 Gbit/s (min 2.10, max 2.14 per stream)  ..."
std::string SecondLine(double seconds, const std::vector<StreamSummary>& streams);
// One line per stream and a total line.
std::string FinalReport(double seconds, const std::vector<StreamSummary>& streams);
// "swap sync: 1320 ticks shown, 0 skipped, 0 partial; skew mean 0.21, p99 0.80, max 1.10 ms (1320
// ticks)"
std::string SyncReportLine(const SwapSyncMaster& sync);
// How on time the coordinator sent its ticks: a tick is late when it went
// out over a quarter interval after it was due (every tile then sees it
// late, whatever its rank does).
struct TickTiming {
  uint64_t sent = 0, late = 0;
  int64_t max_late_ns = 0;       // due to the start of its broadcast
  int64_t max_broadcast_ns = 0;  // one tick's ring and sends to every rank
  bool real_time = false;        // the clock ran at SCHED_FIFO (common/base/realtime.h)
  uint64_t windows_over_budget = 0;
  uint64_t shed = 0;       // ticks dropped on every tile: the senders fell behind
  uint64_t shed_cuts = 0;  // times the share sent was cut (common/control/tick_shedder.h)
  int64_t latency_ns = 0;  // the playout latency at the end (0: shown as decided)
};

// `sync`: the swap sync's results, or null when it did not run; `ticks`:
// the coordinator's, or null (benchmark mode).
std::string FinalReportJson(double seconds, const std::vector<StreamSummary>& streams,
                            const WallConfig& config, bool bench,
                            const SwapSyncMaster* sync = nullptr,
                            const TickTiming* ticks = nullptr);

// The plan printed once every tile rank is ready: the wall, the stream
// settings, and per tile its rank, destination, NIC (NUMA node), send path
// and reads; it maps ranks to tiles when a rank dies. `ready` is per tile.
std::string PlanReport(const Wall& wall, const StreamerOptions& options, const RankPlan& plan,
                       const std::vector<ReadyMessage>& ready, int world_size);

}  // namespace tilestream
