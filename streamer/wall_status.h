// What the control channel's `status` says beyond the playback state: the
// swap sync, and per tile its rank, NIC, the sender's last second and its
// receiver's last report. Built from plain values, so it is tested without
// MPI (tests/streamer/wall_status_test.cpp).
#pragma once

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "common/control/swap_sync.h"
#include "common/control/tick_shedder.h"
#include "common/wall/wall_config.h"
#include "streamer/control_server.h"
#include "streamer/messages.h"
#include "streamer/rank_plan.h"
#include "streamer/report.h"

namespace tilestream {

struct WallStatusView {
  const WallConfig& config;
  const RankPlan& plan;
  const SwapSyncMaster& sync;
  size_t synced_nodes = 0;
  // Per tile; last_second may be empty before the first second.
  const std::vector<StreamSummary>& last_second;
  const std::vector<TileStats>& latest;
  const std::vector<ControlServer::ReceiverTileStats>& receivers;
  const TickShedder& shedder;  // the ticks dropped on every tile
  // The playout latency in use (0: shown as decided), and the round trip
  // measured on each display node's sync connection (config.nodes' order).
  int64_t latency_ns = 0;
  std::vector<RttEstimate> node_rtt = {};
  // Why a display node was refused at its join (config.nodes' order; empty:
  // it was not).
  std::vector<std::string> node_refusals = {};
  // The display node that decides the ticks (config.nodes' index), or -1:
  // the coordinator.
  int leader = -1;
};

// Adds "sync" and "tiles" to the reply object *out.
void AddWallStatus(const WallStatusView& v, nlohmann::json* out);

}  // namespace tilestream
