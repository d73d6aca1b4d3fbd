// A display node's receiver: one TileReceiver per tile the config gives the
// node, a line a second, and a final report per tile (text and JSON);
// headless, or with a mosaic window showing the node's tiles as the wall.
// With swap sync (the config's [sync], unless turned off here), the node
// shows a tick only when the coordinator releases it (receiver/sync_client.h).
// Per-tile fullscreen windows (issue 4) are not here yet.
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
  bool sync = true;           // take part in the config's swap sync
  bool quiet = false;
  bool mosaic = false;        // a window showing the node's tiles as the wall
  int window_width = 1280, window_height = 480;
  std::string screenshot;     // mosaic: save the last picture here (PPM)
};

// Returns the process exit code.
int RunNodeReceiver(const WallConfig& config, const NodeReceiverOptions& options, const std::atomic<bool>* stop);

}  // namespace tilestream
