// A display node's receiver: one TileReceiver per tile the config gives the
// node, a line a second, and a final report per tile (text and JSON);
// headless, or in windows (receiver/node_display.h); the key o toggles an
// overlay per tile with fps, Gbit/s, loss and tick.
// With swap sync (the config's [sync], unless turned off here), the node
// shows a tick only when the coordinator releases it (receiver/sync_client.h).
#pragma once

#include <atomic>
#include <string>

#include "common/wall/wall_config.h"
#include "receiver/node_display.h"

namespace tilestream {

struct NodeReceiverOptions {
  std::string node;
  double duration_s = 0;  // 0: until stopped
  std::string json_path;
  std::string frame_log;    // "tile timestamp checksum" per complete frame
  std::string present_log;  // "tile timestamp realtime_ns" per tile frame shown (swap sync)
  bool show_partial = false;
  bool placement = true;       // receive our streamer's pixels straight into the frame
  bool retransmission = true;  // ask for lost packets again where the config has it on
  bool sync = true;            // take part in the config's swap sync
  int sync_priority = 10;      // SCHED_FIFO priority of the presenter with sync; 0: none
  bool quiet = false;
  NodeDisplayOptions display{DisplayMode::kHeadless};
  bool overlay = false;    // start with the overlay shown
  std::string screenshot;  // save the last picture here (PPM; one file per window)
};

// Returns the process exit code.
int RunNodeReceiver(const WallConfig& config, const NodeReceiverOptions& options,
                    const std::atomic<bool>* stop);

}  // namespace tilestream
