// Test helper: a fresh directory removed with everything in it at scope end
// (kept, and named on stderr, when TILESTREAM_KEEP_TEST_DIRS is set: a live
// test's logs and reports to read after it).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

namespace tilestream::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& parent = "") {
    std::string base = parent;
    if (base.empty()) {
      const char* t = std::getenv("TMPDIR");
      base = t && *t ? t : "/tmp";
    }
    std::string pattern = base + "/tilestream-test-XXXXXX";
    path_ = mkdtemp(pattern.data()) ? pattern : "";
  }
  ~TempDir() {
    if (std::getenv("TILESTREAM_KEEP_TEST_DIRS")) {
      std::cerr << "kept " << path_ << "\n";
      return;
    }
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace tilestream::testing
