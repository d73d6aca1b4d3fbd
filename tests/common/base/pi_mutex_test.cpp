// The priority-inheritance mutex (common/base/pi_mutex.h): a normal thread
// holding it while a real-time thread waits runs at the waiter's priority
// until it lets go.
#include "common/base/pi_mutex.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include "tests/support/wait_for.h"

namespace tilestream {
namespace {

// The kernel's priority of thread `tid` of this process as it runs now,
// boosts included (the 18th field of its stat): 20 + nice (0-39) for a
// normal thread, -11 at SCHED_FIFO 10.
int RunningPriority(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream rest(text.substr(text.rfind(')') + 2));  // past the name
  std::string field;
  for (int i = 3; i <= 18; ++i) rest >> field;
  return std::stoi(field);
}

TEST(PiMutexTest, AHolderRunsAtThePriorityOfARealTimeWaiter) {
  if (geteuid() != 0) GTEST_SKIP() << "SCHED_FIFO needs root or CAP_SYS_NICE";
  PiMutex mu;
  std::atomic<pid_t> holder_tid{0};
  std::atomic<bool> let_go{false}, waiter_got_it{false};
  std::thread holder([&] {
    std::lock_guard lock(mu);
    holder_tid = static_cast<pid_t>(syscall(SYS_gettid));
    while (!let_go) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  ASSERT_TRUE(testing::WaitFor([&] { return holder_tid != 0; }));
  const int before = RunningPriority(holder_tid);
  EXPECT_GE(before, 0) << "a normal thread (20 + its nice) before anyone waits";
  std::thread waiter([&] {
    const sched_param param{.sched_priority = 10};
    ASSERT_EQ(pthread_setschedparam(pthread_self(), SCHED_FIFO, &param), 0);
    std::lock_guard lock(mu);
    waiter_got_it = true;
  });
  EXPECT_TRUE(testing::WaitFor([&] { return RunningPriority(holder_tid) == -11; }))
      << "the holder never ran at the waiter's SCHED_FIFO 10: " << RunningPriority(holder_tid);
  EXPECT_FALSE(waiter_got_it);
  let_go = true;
  holder.join();
  waiter.join();
  EXPECT_TRUE(waiter_got_it);
}

TEST(PiMutexTest, TryLockFailsWhileHeldAndTakesItOnceFree) {
  PiMutex mu;
  std::unique_lock lock(mu);
  bool taken = true;
  std::thread([&] { taken = mu.try_lock(); }).join();
  EXPECT_FALSE(taken);
  lock.unlock();
  std::thread([&] {
    taken = mu.try_lock();
    if (taken) mu.unlock();
  }).join();
  EXPECT_TRUE(taken);
}

}  // namespace
}  // namespace tilestream
