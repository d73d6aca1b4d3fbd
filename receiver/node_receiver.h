// A display node's receiver, headless: one TileReceiver per tile the config
// gives the node, a line a second, and a final report per tile (text and
// JSON). Rendering and swap sync (issue 4) are not here yet.
#pragma once

#include <atomic>
#include <string>

#include "common/wall_config.h"

namespace tilestream {

struct NodeReceiverOptions {
  std::string node;
  double duration_s = 0;      // 0: until stopped
  std::string json_path;
  std::string frame_log;      // "tile timestamp checksum" per complete frame
  bool show_partial = false;
  bool quiet = false;
};

// Returns the process exit code.
int RunNodeReceiver(const WallConfig& config, const NodeReceiverOptions& options, const std::atomic<bool>* stop);

}  // namespace tilestream
