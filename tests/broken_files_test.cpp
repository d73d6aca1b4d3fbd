// The corpus of broken files (tests/corpus/broken/): wall configs and movie
// manifests with one mistake each, and files no editor makes (binary
// garbage, invalid UTF-8, 100,000 nested brackets, a megabyte-long string).
// Each file says what its message must contain in "# expect: TEXT" lines
// (the key and the problem). Every one must be refused with a message that
// names the file and says those things, by the loader and by every program
// that reads it, which must exit with its error code, not a signal.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "common/store/tile_store.h"
#include "common/wall/wall_config.h"
#include "tests/support/built_paths.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"

namespace tilestream {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::Shell;
using testing::TempDir;

const std::string kCorpus = TILESTREAM_SOURCE_DIR + "/tests/corpus/broken/";

std::vector<fs::path> Files(const std::string& kind) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(kCorpus + kind)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// The "# expect: TEXT" lines at the top of `file`.
std::vector<std::string> Expected(const fs::path& file) {
  std::vector<std::string> expect;
  std::ifstream in(file, std::ios::binary);
  for (std::string line; std::getline(in, line) && line.rfind("# expect: ", 0) == 0;)
    expect.push_back(line.substr(10));
  return expect;
}

void ExpectRefusal(const std::string& who, const std::string& message, const std::string& file,
                   const std::vector<std::string>& expect) {
  EXPECT_THAT(message, HasSubstr(file)) << who << " does not name the file";
  for (const std::string& e : expect) EXPECT_THAT(message, HasSubstr(e)) << who;
}

// The program's exit code must be its own (1 or 2), not a signal's (128+).
void ExpectProgramRefuses(const std::string& command, const std::string& file,
                          const std::vector<std::string>& expect, const TempDir& dir) {
  const auto r = Shell("timeout 20 " + command, dir);
  EXPECT_TRUE(r.exit_code == 1 || r.exit_code == 2) << command << " exited " << r.exit_code << ":\n"
                                                    << r.output;
  ExpectRefusal(command, r.output, file, expect);
}

TEST(BrokenFiles, TheCorpusHasBothKinds) {
  EXPECT_GE(Files("config").size(), 20u);
  EXPECT_GE(Files("manifest").size(), 15u);
  for (const auto& kind : {"config", "manifest"})
    for (const auto& f : Files(kind))
      EXPECT_FALSE(Expected(f).empty()) << f << " says nothing it expects";
}

TEST(BrokenFiles, EveryBrokenConfigIsRefusedByTheLoaderAndEveryProgram) {
  TempDir dir;
  for (const fs::path& f : Files("config")) {
    SCOPED_TRACE(f.filename().string());
    const std::vector<std::string> expect = Expected(f);
    auto c = LoadWallConfig(f);
    EXPECT_FALSE(c.ok()) << "accepted";
    if (c.ok()) continue;
    ExpectRefusal("LoadWallConfig", c.status().message(), f, expect);
    ExpectProgramRefuses(STREAMER_PATH + " --check --config " + f.string(), f, expect, dir);
    ExpectProgramRefuses(RECEIVER_PATH + " --headless --duration 1 --config " + f.string(), f,
                         expect, dir);
    ExpectProgramRefuses(WALLCTL_PATH + " --config " + f.string() + " status", f, expect, dir);
  }
}

TEST(BrokenFiles, EveryBrokenManifestIsRefusedByTheLoaderAndTheStreamer) {
  for (const fs::path& f : Files("manifest")) {
    SCOPED_TRACE(f.filename().string());
    TempDir dir;
    const std::string movie = dir / "movie";
    fs::create_directory(movie);
    fs::copy_file(f, movie + "/movie.toml");
    std::ofstream(movie + "/tile_r0_c0.rgb")
        << std::string(10 * 12288, '\0');  // a right-sized tile file
    const std::vector<std::string> expect = Expected(f);
    auto m = OpenTileStore(movie);
    EXPECT_FALSE(m.ok()) << "accepted";
    if (m.ok()) continue;
    ExpectRefusal("OpenTileStore", m.status().message(), movie + "/movie.toml", expect);
    ExpectProgramRefuses(STREAMER_PATH + " --check --layout 1x1 --movie " + movie,
                         movie + "/movie.toml", expect, dir);
  }
}

// Every program logs through one logger: a line with its date, time, level
// and name; --log-level sets the threshold.
TEST(ProgramLogs, AnErrorIsOneLineWithTimeLevelAndProgram) {
  TempDir dir;
  const std::string bad = Files("config").front().string();
  const std::regex line(
      R"(^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} error (streamer|receiver|wallctl): .+$)");
  for (const std::string& command : {STREAMER_PATH + " --check --config " + bad,
                                     RECEIVER_PATH + " --headless --duration 1 --config " + bad,
                                     WALLCTL_PATH + " --port 1 status"}) {
    const auto r = Shell("timeout 20 " + command, dir);
    EXPECT_NE(r.exit_code, 0) << command;
    std::istringstream lines(r.output);
    std::string first;
    std::getline(lines, first);
    EXPECT_TRUE(std::regex_match(first, line)) << command << ":\n" << r.output;
  }
  EXPECT_EQ(Shell("timeout 20 " + WALLCTL_PATH + " --port 1 --log-level off status", dir).output,
            "")
      << "nothing logged";
  const auto unknown = Shell("timeout 20 " + WALLCTL_PATH + " --log-level loud status", dir);
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_THAT(unknown.output, HasSubstr("--log-level"));
}

}  // namespace
}  // namespace tilestream
