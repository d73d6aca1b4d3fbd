#include "common/control/tick_shedder.h"

#include <algorithm>

namespace tilestream {

bool TickShedder::Keep() {
  credit_ += keep_;
  if (credit_ >= 1.0 - 1e-9) {  // shares like 0.88 add up to 0.99999... in floating point
    credit_ -= 1.0;
    return true;
  }
  ++shed_;
  return false;
}

void TickShedder::Look(uint64_t sent, uint64_t skipped) {
  if (sent + skipped == 0) return;  // nothing played: no news
  if (ignore_looks_ > 0) {
    --ignore_looks_;
    return;
  }
  const double skipped_share = static_cast<double>(skipped) / static_cast<double>(sent + skipped);
  if (skipped_share >= kCutAt) {
    keep_ = std::max(kMinKeep, keep_ * (1.0 - skipped_share - kMargin));
    ++cuts_;
    quiet_looks_ = 0;
    ignore_looks_ = kLooksIgnoredAfterCut;
    return;
  }
  if (keep_ >= 1.0 || ++quiet_looks_ < kQuietLooksToRaise) return;
  quiet_looks_ = 0;
  keep_ = std::min(1.0, keep_ + kRaiseStep);
  if (keep_ >= 1.0) credit_ = 0;
}

}  // namespace tilestream
