#include "common/control/present_schedule.h"

#include <algorithm>

namespace tilestream {

std::optional<SyncEvent> PresentSchedule::Take(const SyncEvent& e, int64_t now_ns) {
  if (e.at_ns <= 0 || e.decision == SyncDecision::kSkip) return e;
  const int64_t ahead = e.at_ns - now_ns;
  if (ahead < 0) {
    ++late_;
    late_max_ns_ = std::max(late_max_ns_, -ahead);
  }
  if (ahead > kMaxAheadNs) return e;
  std::optional<SyncEvent> pushed_out;
  if (timed_.size() == kMaxTimed) {  // cannot happen with a sane latency
    pushed_out = timed_.front();
    timed_.pop_front();
  }
  timed_.push_back(e);
  return pushed_out;
}

SyncEvent PresentSchedule::TakeNext() {
  const SyncEvent e = timed_.front();
  timed_.pop_front();
  return e;
}

}  // namespace tilestream
