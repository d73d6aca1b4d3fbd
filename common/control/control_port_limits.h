// The control port's bounds on its clients (issue 35, docs/control.md), as
// arithmetic on a clock the caller passes in, so that tests drive the time
// by hand; streamer/control_server.cpp acts on what they say. Pure.
//
// A line must end within control.line_timeout_s of its first byte; a
// command connection must send a whole line at least every
// control.idle_timeout_s (a display node's sync connection has no idle
// bound). The port holds control.max_clients connections, and two more for
// each display node from the nodes' addresses; full, the stalest command
// connection gives its place to a newcomer: one with a line under way (the
// oldest such line) before one without (the longest without a line).
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/wall/wall_config.h"

namespace tilestream {

struct ControlLineTimes {
  int64_t last_line_ns = 0;      // its last whole line (or its connection)
  int64_t line_started_ns = -1;  // the first byte of the line under way; -1: none
};

enum class ControlDeadline { kNone, kLineTooSlow, kIdle };

// Notes at `now` whether a line is under way, and says which bound, if
// any, the client broke.
ControlDeadline CheckControlDeadlines(ControlLineTimes* t, bool line_under_way, bool sync,
                                      int64_t now, const ControlSettings& s);

// Whether `a` gives its place up before `b`.
bool StalerThan(const ControlLineTimes& a, const ControlLineTimes& b);

// Whether one more connection fits beside `open` ones without evicting.
bool ControlPortHasRoom(size_t open, const ControlSettings& s, size_t nodes, bool from_node);

}  // namespace tilestream
