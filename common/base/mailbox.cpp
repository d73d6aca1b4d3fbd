#include "common/base/mailbox.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

namespace tilestream {

Mailbox::Mailbox() : event_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

std::optional<std::string> Mailbox::Call(std::function<std::string()> work,
                                         std::chrono::milliseconds timeout) {
  auto job = std::make_shared<Job>();
  job->work = std::move(work);
  std::unique_lock lock(mu_);
  jobs_.push_back(job);
  const uint64_t one = 1;
  if (write(event_.get(), &one, sizeof one) != sizeof one) {  // cannot fail below 2^64 - 1
    jobs_.pop_back();
    return std::nullopt;
  }
  answered_.wait_for(lock, timeout, [&] { return job->done; });
  if (job->done) return std::move(job->answer);
  if (!job->taken) {  // never run late: the caller has gone
    job->dropped = true;
    return std::nullopt;
  }
  answered_.wait(lock, [&] { return job->done; });  // running now: a short wait
  return std::move(job->answer);
}

void Mailbox::RunPending() {
  uint64_t count = 0;
  if (read(event_.get(), &count, sizeof count) < 0) count = 0;  // nothing waits
  for (;;) {
    std::unique_lock lock(mu_);
    while (!jobs_.empty() && jobs_.front()->dropped) jobs_.pop_front();
    if (jobs_.empty()) return;
    const std::shared_ptr<Job> job = jobs_.front();
    jobs_.pop_front();
    job->taken = true;
    lock.unlock();
    std::string answer = job->work();
    lock.lock();
    job->answer = std::move(answer);
    job->done = true;
    answered_.notify_all();
  }
}

}  // namespace tilestream
