// A tile rank: opens its tile's frames (read-ahead ring, or memory for
// benchmarks) and its socket on the tile's NIC, reports ready, then sends the
// frame of every tick the coordinator gives (or, in benchmark mode, frames
// back to back) until told to stop, with statistics once a second.
#pragma once

#include <atomic>
#include <string>

#include "streamer/launch.h"
#include "streamer/messages.h"
#include "streamer/streamer_options.h"

namespace tilestream {

// Returns the process exit code.
int RunTileRank(const WallComm& comm, const StreamerOptions& options, const Wall& wall,
                const std::atomic<bool>* stop);

// For a tile rank that could not even resolve the wall.
void ReportSetUpFailure(const WallComm& comm, const std::string& error);

}  // namespace tilestream
