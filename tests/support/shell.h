// Test helper: runs a shell command line as a user would, capturing its exit
// code and its stdout + stderr.
#pragma once

#include <sys/wait.h>

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

}  // namespace tilestream::testing
