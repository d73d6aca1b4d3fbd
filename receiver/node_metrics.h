// A display node's /metrics (docs/operations.md): per tile (labels tile,
// node) what arrived, what was lost, reordered, duplicated, late or
// malformed (by reason), frames complete and incomplete, the kernel's
// drops and retransmissions; per node the ticks shown and skipped and the
// frames shown in the last second. Served on
// http.node_listen:http.node_port(node) by its own HTTP threads, which read
// the tiles' published snapshots (TileReceiver::Snapshot is thread-safe)
// and what the main thread last said of the node (under a mutex): nothing
// on the receive path changes for it. The listener's own counters
// (tilestream_http_*, label listener="node") come last.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "common/net/http_service.h"
#include "common/receive/tile_receiver.h"
#include "common/wall/wall_config.h"
#include "receiver/presenter.h"

namespace tilestream {

struct NodeMetricsView {
  std::string node;
  std::vector<std::string> tile_names;
  std::vector<TileReceiverStats> tiles;
  PresentCounts shown;
  uint64_t fps = 0;  // frames shown in the last second (the node's first tile)
};

std::string NodeMetricsText(const NodeMetricsView& v);

class NodeMetrics {
 public:
  // Serves when http.node_port_base is not 0 (else returns null). `tiles`
  // and `names` outlive it.
  static Result<std::unique_ptr<NodeMetrics>> Start(
      const WallConfig& c, uint32_t node, const std::vector<std::unique_ptr<TileReceiver>>* tiles,
      std::vector<std::string> names);

  // The main thread, once a second.
  void SetShown(const PresentCounts& counts, uint64_t fps);
  uint16_t port() const { return service_->port(); }

 private:
  NodeMetrics(std::string node, const std::vector<std::unique_ptr<TileReceiver>>* tiles,
              std::vector<std::string> names)
      : node_(std::move(node)), tiles_(*tiles), names_(std::move(names)) {}
  std::string Text() const;

  const std::string node_;
  const std::vector<std::unique_ptr<TileReceiver>>& tiles_;
  const std::vector<std::string> names_;
  mutable std::mutex mu_;
  PresentCounts shown_;
  uint64_t fps_ = 0;
  HttpCounters counters_;
  std::unique_ptr<HttpService> service_;  // last: stopped first
};

}  // namespace tilestream
