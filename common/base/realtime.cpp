#include "common/base/realtime.h"

#include <pthread.h>
#include <sched.h>

#include <string>

namespace tilestream {
namespace {

Status SetCallingThread(int priority, bool real_time) {
  const sched_param param{.sched_priority = real_time ? priority : 0};
  const int policy = real_time ? SCHED_FIFO : SCHED_OTHER;
  if (const int err = pthread_setschedparam(pthread_self(), policy, &param); err != 0)
    return Status::IoError("SCHED_FIFO at priority " + std::to_string(priority), err);
  return Status::Ok();
}

}  // namespace

RealTimeBudget::RealTimeBudget(int priority, int64_t now)
    : RealTimeBudget([priority](bool rt) { return SetCallingThread(priority, rt); }, now) {}

RealTimeBudget::RealTimeBudget(Apply apply, int64_t now)
    : apply_(std::move(apply)), woke_ns_(now), window_end_ns_(now + kWindowNs) {
  status_ = apply_(true);
  real_time_ = status_.ok();
}

RealTimeBudget::~RealTimeBudget() { Set(false); }

void RealTimeBudget::Sleeping(int64_t now) {
  if (!status_.ok()) return;
  if (now >= window_end_ns_) {
    window_end_ns_ = now + kWindowNs;
    spent_ns_ = 0;
    Set(true);
    return;  // the work that ended this window counted in it, if anywhere
  }
  spent_ns_ += now - woke_ns_;
  if (spent_ns_ > kBudgetNs && real_time_) {
    ++windows_over_budget_;
    Set(false);
  }
}

void RealTimeBudget::Set(bool real_time) {
  if (real_time == real_time_) return;
  real_time_ = real_time;
  apply_(real_time);  // lowering cannot fail; raising again was permitted once
}

}  // namespace tilestream
