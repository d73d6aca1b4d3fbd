#include "common/control/tick_shedder.h"

#include <algorithm>
#include <cmath>

namespace tilestream {

namespace {

constexpr double kWhole = 1.0 - 1e-9;  // shares like 0.88 add up to 0.99999... in floating point

}  // namespace

bool TickShedder::Keep() {
  if (pending_shed_ > 0) {  // decided when the last tick was sent
    --pending_shed_;
    ++shed_;
    return false;
  }
  credit_ += keep_;
  if (credit_ < kWhole) {  // the share was cut since
    ++shed_;
    return false;
  }
  credit_ -= 1.0;
  // The ticks this one's frames may take: those shed before the next.
  while (credit_ + keep_ < kWhole) {
    credit_ += keep_;
    ++pending_shed_;
  }
  return true;
}

void TickShedder::Look(uint64_t sent, uint64_t skipped, uint32_t tiles) {
  if (sent + skipped == 0) return;  // nothing played: no news
  if (ignore_looks_ > 0) {
    --ignore_looks_;
    return;
  }
  const double skipped_share = static_cast<double>(skipped) / static_cast<double>(sent + skipped);
  const double ticks_hit = 1.0 - std::pow(1.0 - skipped_share, std::max<uint32_t>(1, tiles));
  if (ticks_hit >= kCutAt) {
    quiet_looks_ = 0;
    if (++busy_looks_ < kBusyLooksToCut) return;
    keep_ = std::max(kMinKeep, keep_ * (1.0 - skipped_share - kMargin));
    ++cuts_;
    busy_looks_ = 0;
    ignore_looks_ = kLooksIgnoredAfterCut;
    return;
  }
  busy_looks_ = 0;
  if (ticks_hit >= kQuietUnder) {  // lost now and then: neither cut nor raised
    quiet_looks_ = 0;
    return;
  }
  if (keep_ >= ceiling_ || ++quiet_looks_ < kQuietLooksToRaise) return;
  quiet_looks_ = 0;
  keep_ = std::min(ceiling_, keep_ + kRaiseStep);
  if (keep_ >= 1.0) credit_ = 0;
}

void TickShedder::SetCeiling(double ceiling) {
  ceiling = std::clamp(ceiling, kMinKeep, 1.0);
  if (ceiling == ceiling_) return;
  const bool held = keep_ >= ceiling_;
  ceiling_ = ceiling;
  if (keep_ > ceiling_) {
    keep_ = ceiling_;
    ++cuts_;
  } else if (held) {
    keep_ = ceiling_;
    if (keep_ >= 1.0) credit_ = 0;
  }
}

}  // namespace tilestream
