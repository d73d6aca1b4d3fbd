// The frame clock's real-time budget (common/base/realtime.h): real-time
// while its work stays under 5 ms per 100 ms window, normal priority for
// the rest of a window past that, one policy change per change only.
#include "common/base/realtime.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <thread>
#include <vector>

namespace tilestream {
namespace {

constexpr int64_t kMs = 1'000'000;

struct Recorder {
  std::vector<bool> applied;
  Status answer = Status::Ok();
  RealTimeBudget::Apply apply() {
    return [this](bool rt) {
      applied.push_back(rt);
      return answer;
    };
  }
};

// One wake-up at `at` that works for `work` ns.
void Work(RealTimeBudget& b, int64_t at, int64_t work) {
  b.Woke(at);
  b.Sleeping(at + work);
}

TEST(RealTimeBudgetTest, RaisesAtTheStartAndLowersAtTheEnd) {
  Recorder r;
  {
    RealTimeBudget b(r.apply(), 0);
    EXPECT_TRUE(b.status().ok());
    EXPECT_TRUE(b.real_time());
  }
  EXPECT_EQ(r.applied, (std::vector<bool>{true, false}));
}

TEST(RealTimeBudgetTest, WorkUnderTheBudgetStaysRealTimeWithNoSystemCall) {
  Recorder r;
  RealTimeBudget b(r.apply(), 0);
  for (int64_t t = 0; t < 10 * RealTimeBudget::kWindowNs; t += 45 * kMs / 10)
    Work(b, t, 200'000);  // 4.4% of the time, in short bursts
  EXPECT_TRUE(b.real_time());
  EXPECT_EQ(b.windows_over_budget(), 0u);
  EXPECT_EQ(r.applied, (std::vector<bool>{true}));
}

TEST(RealTimeBudgetTest, AFloodRunsAtNormalPriorityForTheRestOfItsWindow) {
  Recorder r;
  RealTimeBudget b(r.apply(), 0);
  int64_t t = 0;
  for (int i = 0; i < 5; ++i, t += 2 * kMs) Work(b, t, kMs);
  EXPECT_TRUE(b.real_time()) << "5 ms: the budget, not over it";
  Work(b, t, kMs);
  EXPECT_FALSE(b.real_time()) << "6 ms of work in one window";
  Work(b, 50 * kMs, kMs);
  EXPECT_FALSE(b.real_time()) << "still the same window";
  EXPECT_EQ(r.applied, (std::vector<bool>{true, false}));
  Work(b, RealTimeBudget::kWindowNs, kMs);
  EXPECT_TRUE(b.real_time()) << "a new window";
  EXPECT_EQ(b.windows_over_budget(), 1u);
  EXPECT_EQ(r.applied, (std::vector<bool>{true, false, true}));
}

TEST(RealTimeBudgetTest, ALongBurstLowersAtOnce) {
  Recorder r;
  RealTimeBudget b(r.apply(), 0);
  Work(b, kMs, 30 * kMs);
  EXPECT_FALSE(b.real_time());
  EXPECT_EQ(b.windows_over_budget(), 1u);
}

TEST(RealTimeBudgetTest, RefusedItChangesNothing) {
  Recorder r;
  r.answer = Status::IoError("SCHED_FIFO at priority 10: Operation not permitted");
  {
    RealTimeBudget b(r.apply(), 0);
    EXPECT_FALSE(b.status().ok());
    EXPECT_FALSE(b.real_time());
    Work(b, 0, 50 * kMs);
    Work(b, 2 * RealTimeBudget::kWindowNs, kMs);
  }
  EXPECT_EQ(r.applied, (std::vector<bool>{true})) << "one try, nothing after";
}

int PolicyOfThisThread() {
  int policy = -1;
  sched_param param{};
  pthread_getschedparam(pthread_self(), &policy, &param);
  return policy;
}

// The system calls themselves, on a thread of its own: only it changes.
TEST(RealTimeBudgetTest, TheCallingThreadAloneRunsRealTime) {
  if (geteuid() != 0) GTEST_SKIP() << "SCHED_FIFO needs root or CAP_SYS_NICE";
  std::vector<int> policies;
  std::thread([&] {
    {
      RealTimeBudget b(10, 0);
      ASSERT_TRUE(b.status().ok()) << b.status().message();
      policies.push_back(PolicyOfThisThread());
      Work(b, kMs, 10 * kMs);
      policies.push_back(PolicyOfThisThread());
    }
    policies.push_back(PolicyOfThisThread());
  }).join();
  EXPECT_EQ(policies, (std::vector<int>{SCHED_FIFO, SCHED_OTHER, SCHED_OTHER}));
  EXPECT_EQ(PolicyOfThisThread(), SCHED_OTHER) << "the test's own thread";
}

}  // namespace
}  // namespace tilestream
