#include "common/pacer.h"

#include <sys/prctl.h>
#include <time.h>

#include <cerrno>

namespace tilestream {
namespace {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

int64_t MonotonicClock::NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

void MonotonicClock::SleepUntilNs(int64_t deadline_ns) {
  // The default 50 us timer slack would make every sleep overshoot by about
  // that much; 1 ns lets a short spin finish the wait. Once per thread.
  thread_local const bool precise = prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0) == 0;
  (void)precise;
  timespec ts{static_cast<time_t>(deadline_ns / 1'000'000'000),
              static_cast<long>(deadline_ns % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

void Pacer::BeginFrame(int64_t start_ns, int64_t interval_ns, uint32_t packets) {
  start_ns_ = start_ns;
  interval_ns_ = interval_ns;
  packets_ = packets;
}

int64_t Pacer::SlotNs(uint32_t index) const {
  // long double holds index * interval exactly (64-bit mantissa).
  return start_ns_ + static_cast<int64_t>(static_cast<long double>(index) * interval_ns_ / packets_);
}

void Pacer::WaitForPacket(uint32_t index) {
  ++stats_.waits;
  if (!options_.enabled) return;
  const int64_t slot = SlotNs(index);
  int64_t now = clock_->NowNs();
  if (now >= slot) {
    ++stats_.late;
    const int64_t lag = now - slot;
    if (lag > options_.max_lag_ns) {
      // Move the rest of the frame back so only max_lag_ns of backlog bursts.
      const int64_t slip = lag - options_.max_lag_ns;
      start_ns_ += slip;
      ++stats_.slips;
      stats_.slipped_ns += slip;
    }
    return;
  }
  if (slot - now > options_.spin_ns) {
    clock_->SleepUntilNs(slot - options_.spin_ns);
    ++stats_.sleeps;
  }
  while (clock_->NowNs() < slot) CpuRelax();
}

}  // namespace tilestream
