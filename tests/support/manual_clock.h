// A clock the test moves by hand: nothing waits on it.
#pragma once

#include <cstdint>

#include "common/base/clock.h"

namespace tilestream::testing {

class ManualClock final : public Clock {
 public:
  int64_t NowNs() override { return now_ns_; }
  void SleepUntilNs(int64_t deadline_ns) override {
    if (deadline_ns > now_ns_) now_ns_ = deadline_ns;
  }
  void Advance(int64_t ns) { now_ns_ += ns; }

 private:
  int64_t now_ns_ = 1'000'000'000;
};

}  // namespace tilestream::testing
