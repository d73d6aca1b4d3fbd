// Test helper: `promtool check metrics` (Debian's prometheus package, from
// scripts/install-deps.sh) over a /metrics text: its exit code and what it
// said (lint problems name the metric).
#pragma once

#include <fstream>
#include <string>

#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"

namespace tilestream::testing {

inline ProcessResult PromtoolCheck(const std::string& metrics) {
  TempDir dir;
  std::ofstream(dir / "metrics.txt") << metrics;
  return Shell("promtool check metrics < " + (dir / "metrics.txt"), dir);
}

}  // namespace tilestream::testing
