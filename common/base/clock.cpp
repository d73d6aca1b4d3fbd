#include "common/base/clock.h"

#include <sys/prctl.h>

#include <cerrno>

namespace tilestream {

void MonotonicClock::SleepUntilNs(int64_t deadline_ns) {
  // The default 50 us timer slack would make every sleep overshoot by about
  // that much; 1 ns lets a short spin finish the wait. Once per thread.
  thread_local const bool precise = prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0) == 0;
  (void)precise;
  timespec ts{static_cast<time_t>(deadline_ns / kNsPerSecond),
              static_cast<long>(deadline_ns % kNsPerSecond)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace tilestream
