// One logger for every program (docs/operations.md): spdlog's default
// logger on stderr, one line per event with its time and level, so that a
// display node's systemd journal tells what happened when:
//
//   2026-11-24 13:50:01.123 error streamer: tile r0c1 (rank 2) stopped responding
//
// Events only: start-up problems, a tile that stops, a node that joins or
// leaves. Never a line per packet or per frame (hot paths count instead).
// Reports and per-second lines are the programs' output and go to stdout.
#pragma once

#include <spdlog/spdlog.h>

#include <string_view>

#include "common/base/result.h"

namespace tilestream {

inline constexpr std::string_view kLogLevels = "trace, debug, info, warn, error, critical, off";

// Names `program` on every line and sets the level ("info" by default);
// an unknown level is an error naming the known ones (and nothing changes).
Status SetUpLogging(std::string_view program, std::string_view level = "info");

}  // namespace tilestream
