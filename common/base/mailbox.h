// Work handed to a single-threaded owner from other threads, with the
// answer handed back: the coordinator's HTTP threads ask its loop for the
// status, a command's effect or the metrics, so that everything the wall's
// state is touched by runs on the coordinator's thread, in the order it
// came (streamer/http_api.h).
//
// The owner watches fd() (an eventfd, readable while work waits) in its own
// poll and calls RunPending(). A caller waits at most `timeout` for its
// answer; work the owner has not started by then is dropped, never run late.
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/base/unique_fd.h"

namespace tilestream {

class Mailbox {
 public:
  Mailbox();

  // Runs `work` on the owner's thread and returns what it returned; nothing
  // if the owner did not take it within `timeout`.
  std::optional<std::string> Call(std::function<std::string()> work,
                                  std::chrono::milliseconds timeout);

  // The owner's side.
  int fd() const { return event_.get(); }
  void RunPending();

 private:
  struct Job {
    std::function<std::string()> work;
    std::string answer;
    bool taken = false, done = false, dropped = false;
  };

  UniqueFd event_;
  std::mutex mu_;
  std::condition_variable answered_;
  std::deque<std::shared_ptr<Job>> jobs_;
};

}  // namespace tilestream
