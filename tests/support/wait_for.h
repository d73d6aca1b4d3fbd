// Test helper: waits for a condition with a generous bound instead of a
// fixed sleep, so a test neither flakes on a loaded machine nor waits
// longer than it must on an idle one.
#pragma once

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace tilestream::testing {

// Polls `done` every 20 ms until it is true or `bound` passed; returns the
// last answer.
template <typename F>
bool WaitFor(F done, std::chrono::milliseconds bound = std::chrono::seconds(60)) {
  const auto until = std::chrono::steady_clock::now() + bound;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return done();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// The text of the file at `path` ("" when there is none).
inline std::string FileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Whether the file at `path` contains `text` (count times at least).
inline bool FileContains(const std::string& path, const std::string& text, size_t count = 1) {
  const std::string all = FileText(path);
  size_t found = 0;
  for (size_t at = all.find(text); at != std::string::npos; at = all.find(text, at + 1)) ++found;
  return found >= count;
}

}  // namespace tilestream::testing
