// The body of every program's main(): sets up the log (common/base/log.h)
// for `program`, runs `run` and turns an exception that escaped it (a bug,
// or memory running out; our code reports errors as Status) into one log
// line and exit code 1 instead of std::terminate's abort and core dump.
#pragma once

#include <exception>

#include "common/base/log.h"

namespace tilestream {

template <typename Run>
int GuardedMain(const char* program, Run run) noexcept {
  try {
    (void)SetUpLogging(program);
    return run();
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
  } catch (...) {
    spdlog::critical("unknown exception");
  }
  return 1;
}

}  // namespace tilestream
