#include "common/control/control_port_limits.h"

#include <utility>

#include "common/base/clock.h"

namespace tilestream {

ControlDeadline CheckControlDeadlines(ControlLineTimes* t, bool line_under_way, bool sync,
                                      int64_t now, const ControlSettings& s) {
  if (!line_under_way) {
    t->line_started_ns = -1;
  } else if (t->line_started_ns < 0) {
    t->line_started_ns = now;
  } else if (now - t->line_started_ns > int64_t{s.line_timeout_s} * kNsPerSecond) {
    return ControlDeadline::kLineTooSlow;
  }
  if (!sync && now - t->last_line_ns > int64_t{s.idle_timeout_s} * kNsPerSecond)
    return ControlDeadline::kIdle;
  return ControlDeadline::kNone;
}

bool StalerThan(const ControlLineTimes& a, const ControlLineTimes& b) {
  const auto key = [](const ControlLineTimes& t) {
    return t.line_started_ns >= 0 ? std::pair(0, t.line_started_ns) : std::pair(1, t.last_line_ns);
  };
  return key(a) < key(b);
}

bool ControlPortHasRoom(size_t open, const ControlSettings& s, size_t nodes, bool from_node) {
  return open < s.max_clients || (from_node && open < s.max_clients + 2 * nodes);
}

}  // namespace tilestream
