// What a display node's receiver is made of, built from the wall config and
// the options: the node, the frame log, the swap-sync client, a
// TileReceiver per tile of the node and the windows. Set up once on the main
// thread; the parts live until the receiver ends and never move (the tile
// threads hold pointers into them).
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <vector>

#include "common/receive/tile_receiver.h"
#include "common/wall/wall_config.h"
#include "receiver/node_display.h"
#include "receiver/node_receiver.h"
#include "receiver/sync_client.h"

namespace tilestream {

struct NodeParts {
  const DisplayNode* node = nullptr;
  uint32_t node_index = 0;
  std::mutex frame_log_mu;  // the tile threads write the log under it
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> frame_log{nullptr, &std::fclose};
  // Written by the presenter alone.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> present_log{nullptr, &std::fclose};
  std::unique_ptr<SyncClient> sync;  // null without swap sync
  std::vector<std::unique_ptr<TileReceiver>> tiles;
  std::vector<uint32_t> indices;         // the wall's index of tiles[i]
  std::unique_ptr<NodeDisplay> display;  // null headless

  NodeParts() = default;
  NodeParts(const NodeParts&) = delete;
  NodeParts& operator=(const NodeParts&) = delete;
};

// Builds every part into *parts (not started). On a problem it says what is
// wrong on stderr and returns the exit code (2: the config or the options,
// 1: the host); 0 when all is set up.
int SetUpNode(const WallConfig& c, const NodeReceiverOptions& o, NodeParts* parts);

// The start-up lines: the node, its tiles and where each comes in.
void PrintNodeStart(const WallConfig& c, const NodeParts& parts);

}  // namespace tilestream
