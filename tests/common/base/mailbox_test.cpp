#include "common/base/mailbox.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <atomic>
#include <thread>

namespace tilestream {
namespace {

using std::chrono::milliseconds;

// The owner: serves the mailbox until told to stop, as the coordinator's
// poll does.
class Owner {
 public:
  explicit Owner(Mailbox* box) : box_(box), thread_([this] { Serve(); }) {}
  ~Owner() {
    stop_ = true;
    thread_.join();
  }
  std::thread::id id() const { return thread_.get_id(); }

 private:
  void Serve() {
    while (!stop_) {
      pollfd p{box_->fd(), POLLIN, 0};
      if (poll(&p, 1, 10) > 0) box_->RunPending();
    }
  }
  Mailbox* box_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST(Mailbox, WorkRunsOnTheOwnersThreadAndItsAnswerComesBack) {
  Mailbox box;
  Owner owner(&box);
  std::thread::id ran_on;
  const auto answer = box.Call(
      [&] {
        ran_on = std::this_thread::get_id();
        return std::string("42");
      },
      milliseconds(10'000));
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(*answer, "42");
  EXPECT_EQ(ran_on, owner.id());
}

TEST(Mailbox, CallsFromManyThreadsEachGetTheirOwnAnswer) {
  Mailbox box;
  Owner owner(&box);
  std::vector<std::thread> callers;
  std::atomic<int> right{0};
  for (int i = 0; i < 8; ++i) {
    callers.emplace_back([&, i] {
      for (int k = 0; k < 50; ++k) {
        const auto answer = [i, k] { return std::to_string(i * 100 + k); };
        if (box.Call(answer, milliseconds(10'000)) == answer()) ++right;
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(right.load(), 400);
}

TEST(Mailbox, WorkNotTakenInTimeIsNeverRunLate) {
  Mailbox box;
  bool ran = false;
  EXPECT_FALSE(box.Call(
                      [&] {
                        ran = true;
                        return std::string();
                      },
                      milliseconds(20))
                   .has_value());
  pollfd p{box.fd(), POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 1) << "the owner was woken";
  box.RunPending();
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace tilestream
