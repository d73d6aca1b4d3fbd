// Real-time scheduling for a thread that sleeps between short bursts of
// work and must not queue behind busier threads when it wakes: the
// streamer's frame clock and a display node's presenter (docs/decisions.md,
// "The frame clock runs at SCHED_FIFO within a budget", "Display nodes act
// on the sync at real-time priority"). Locks such a thread shares with
// normal ones should inherit priority (common/base/pi_mutex.h).
//
// Such a thread may still be handed work it does not control (lines from
// control clients, HTTP requests): at real-time priority a flood of it
// would take a core from everything else. So the time it works between
// sleeps is counted per window (100 ms); once a window's work passes the
// budget (5 ms: 5% of a core) the thread runs at normal priority until
// the window ends, then real-time again. Its own work per window is a few
// ticks or sync lines, far under the budget; a change of policy is one
// system call, made only when the policy changes.
#pragma once

#include <cstdint>
#include <functional>

#include "common/base/result.h"

namespace tilestream {

class RealTimeBudget {
 public:
  static constexpr int64_t kWindowNs = 100'000'000, kBudgetNs = 5'000'000;

  // Sets the calling thread's policy: true SCHED_FIFO, false normal.
  using Apply = std::function<Status(bool real_time)>;

  // The calling thread at SCHED_FIFO `priority` (1-99), only it (threads it
  // starts later inherit it: start them first). Needs root, CAP_SYS_NICE or
  // RLIMIT_RTPRIO; status() says why not, and then nothing changes.
  RealTimeBudget(int priority, int64_t now);
  // With `apply` in place of the system calls (tests).
  RealTimeBudget(Apply apply, int64_t now);
  ~RealTimeBudget();  // normal priority again
  RealTimeBudget(const RealTimeBudget&) = delete;
  RealTimeBudget& operator=(const RealTimeBudget&) = delete;

  const Status& status() const { return status_; }
  bool real_time() const { return real_time_; }
  // Windows whose budget ran out (the thread served the rest at normal priority).
  uint64_t windows_over_budget() const { return windows_over_budget_; }

  // The thread woke at `now`; then it goes to sleep at `now`: the time
  // between counts against the window, and the policy for the sleep (and
  // the work after it) is chosen.
  void Woke(int64_t now) { woke_ns_ = now; }
  void Sleeping(int64_t now);

 private:
  void Set(bool real_time);

  Apply apply_;
  Status status_;
  bool real_time_ = false;
  int64_t woke_ns_ = 0, window_end_ns_ = 0, spent_ns_ = 0;
  uint64_t windows_over_budget_ = 0;
};

}  // namespace tilestream
