// Pre-flight checks of a machine against the wall config (`streamer
// --check`, `receiver --check`): socket buffer maxima, netdev backlog, the
// MTU and NUMA node of the configured interfaces, ports free, and for the
// streamer O_DIRECT and the read rate of the tile store. Each finding says
// what is wrong and the command that fixes it. Reads /proc and /sys under
// a root that tests point elsewhere. Never changes the machine.
#pragma once

#include <string>
#include <vector>

#include "common/store/tile_store.h"
#include "common/wall/wall_config.h"

namespace tilestream {

struct Finding {
  enum class Level { kOk = 0, kWarn = 1, kFail = 2 };
  Level level = Level::kOk;
  std::string what;  // "net.core.rmem_max is 212992, below the 67108864 a tile stream asks for"
  std::string fix;   // "sysctl -w net.core.rmem_max=67108864"; empty when ok
};

struct PreflightOptions {
  std::string proc_root = "/proc";
  std::string sys_root = "/sys";
  std::string host;  // this host's name; "": gethostname
};

// The streamer's machine: send buffers, the NICs (MTU, NUMA node), the
// control port. On a wall of several servers: that this host is one of
// them, and only its NICs (the control port and token on the first).
std::vector<Finding> CheckStreamerHost(const WallConfig& config, const PreflightOptions& o = {});
// A display node: receive buffers, backlog, the tiles' ports.
std::vector<Finding> CheckReceiverHost(const WallConfig& config, uint32_t node,
                                       const PreflightOptions& o = {});
// The tile store: O_DIRECT on the file system of tile `tile`'s file and its
// read rate over up to `frames` frames, against what one tile needs.
std::vector<Finding> CheckStore(const MovieManifest& movie, const WallConfig& config,
                                uint32_t tile = 0, uint32_t frames = 16);

// "ok   ...", "WARN ...   fix: ...", one per line; and whether any failed.
std::string FormatFindings(const std::vector<Finding>& findings, bool* any_failed);

}  // namespace tilestream
