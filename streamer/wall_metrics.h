// The coordinator's /metrics (docs/operations.md): Prometheus text from the
// tiles' counters (labels tile, nic, node), the swap sync (ticks shown and
// skipped, the skew histogram), the display nodes' last reports, the
// playback, and the live sources (label source). Counters are the tiles' totals since the start, so
// Prometheus' rate() gives the rates. Built from plain values, tested without MPI.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "common/control/playback.h"
#include "streamer/wall_status.h"

namespace tilestream {

// `playback`: null in benchmark mode; `live`: status's "live" array (the
// live sources, streamer/live_sources.h), or null.
std::string WallMetrics(const WallStatusView& v, const Playback* playback,
                        const nlohmann::json* live = nullptr);

}  // namespace tilestream
