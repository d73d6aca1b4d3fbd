// The coordinator (rank 0): waits until every tile rank is ready (or names
// the ones that failed), writes SDP files, runs the frame clock at the
// wall's fps (tick k: frame k mod frames, one RTP timestamp for all tiles) or
// the benchmark's heartbeat, prints a line a second from the tiles'
// statistics, ends the job naming a tile that stopped responding, and on
// stop (--ticks, --duration, SIGTERM) collects the final statistics and
// prints the report.
#pragma once

#include <atomic>

#include "streamer/launch.h"
#include "streamer/streamer_options.h"

namespace tilestream {

// Returns the process exit code.
int RunCoordinator(const WallComm& comm, const StreamerOptions& options, const Wall& wall,
                   const std::atomic<bool>* stop);

}  // namespace tilestream
