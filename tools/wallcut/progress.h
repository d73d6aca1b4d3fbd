// A progress bar for long work on a terminal: done/total, rate and ETA,
// redrawn in place at most 10 times a second on stderr. Off when stderr is
// not a terminal (logs and CI stay clean); Finish() then prints one summary
// line. Not thread-safe: one owner updates it.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace tilestream {

class ProgressBar {
 public:
  // total == 0: unknown (no bar, no ETA). `unit` names what is counted.
  ProgressBar(std::string label, uint64_t total, std::string unit, FILE* out = stderr);
  ProgressBar(std::string label, uint64_t total, std::string unit, FILE* out, bool interactive);

  // `done` units finished, `bytes` processed so far (for the rate).
  void Update(uint64_t done, uint64_t bytes);
  void Finish(uint64_t done, uint64_t bytes);

  // One line, without a carriage return: the testable part.
  static std::string Render(const std::string& label, uint64_t done, uint64_t total,
                            const std::string& unit, uint64_t bytes, double seconds, int width);

 private:
  std::string label_, unit_;
  uint64_t total_;
  FILE* out_;
  bool interactive_;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace tilestream
