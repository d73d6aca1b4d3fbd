// The body of every program's main(): runs `run` and turns an exception
// that escaped it (a bug, or memory running out; our code reports errors
// as Status) into one line and exit code 1 instead of std::terminate's
// abort and core dump.
#pragma once

#include <cstdio>
#include <exception>

namespace tilestream {

template <typename Run>
int GuardedMain(const char* program, Run run) noexcept {
  try {
    return run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
  } catch (...) {
    std::fprintf(stderr, "%s: unknown exception\n", program);
  }
  return 1;
}

}  // namespace tilestream
