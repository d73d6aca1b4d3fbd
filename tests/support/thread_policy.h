// Test helper: the scheduling policy of every thread of a live process, to
// check that only the threads meant to run real-time do.
#pragma once

#include <sched.h>

#include <filesystem>
#include <string>
#include <vector>

namespace tilestream::testing {

// The policy (SCHED_OTHER, SCHED_FIFO, ...) of each thread of `pid`, its
// main thread first.
inline std::vector<int> ThreadPolicies(int pid) {
  std::vector<int> policies{sched_getscheduler(pid)};
  for (const auto& e :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task"))
    if (const int tid = std::stoi(e.path().filename()); tid != pid)
      policies.push_back(sched_getscheduler(tid));
  return policies;
}

}  // namespace tilestream::testing
