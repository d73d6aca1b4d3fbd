// Test helper: runs a shell command line as a user would, capturing its exit
// code and its stdout + stderr.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/temp_dir.h"

namespace tilestream::testing {

struct ProcessResult {
  int exit_code;
  std::string output;
};

inline ProcessResult Shell(const std::string& command, const TempDir& dir) {
  const std::string out = dir / "output.txt";
  const int rc = std::system((command + " > " + out + " 2>&1").c_str());
  std::ifstream in(out);
  std::stringstream s;
  s << in.rdbuf();
  std::filesystem::remove(out);
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, s.str()};
}

// `command` through popen, while the test goes on running other programs
// (Shell waits for a file): its exit code, and its stdout + stderr.
inline ProcessResult Capture(const std::string& command) {
  std::string out;
  FILE* f = popen((command + " 2>&1").c_str(), "r");
  if (!f) return {-1, ""};
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  const int rc = pclose(f);
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, out};
}

}  // namespace tilestream::testing
