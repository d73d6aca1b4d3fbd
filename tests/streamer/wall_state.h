// Test helper: the coordinator's state for a 2x1 wall served by two tile
// ranks, as plain values: what `status` and /metrics read, with no MPI and
// no sockets.
#pragma once

#include <vector>

#include "streamer/wall_status.h"

namespace tilestream::testing {

struct WallState {
  WallConfig config = DefaultWallConfig({2, 1});
  RankPlan plan{config, 2};
  SwapSyncMaster sync{2, false};
  std::vector<StreamSummary> last_second;
  std::vector<TileStats> latest = std::vector<TileStats>(2);
  std::vector<ControlServer::ReceiverTileStats> receivers =
      std::vector<ControlServer::ReceiverTileStats>(2);
  TickShedder shedder;
  int64_t latency_ns = 0;
  std::vector<RttEstimate> node_rtt;
  int leader = -1;  // the node deciding the ticks; -1: the coordinator

  WallStatusView View(size_t synced_nodes) const {
    return {config,    plan,    sync,       synced_nodes, last_second, latest,
            receivers, shedder, latency_ns, node_rtt,     {},          leader};
  }
};

}  // namespace tilestream::testing
