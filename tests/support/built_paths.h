// Where the build put the programs the live tests start, and where the
// source tree is: defined in the build's generated built_paths.cpp
// (tests/CMakeLists.txt), so that no file of the tests holds a clone's
// absolute path and a clone elsewhere hits the compiler cache. An empty
// path: not built here (GStreamer's RTX receiver without its -dev files,
// or the sanitizers' build).
#pragma once

#include <string>

namespace tilestream::testing::built {

extern const char kReceiver[];
extern const char kStreamer[];
extern const char kWallctl[];
extern const char kWallcut[];
extern const char kPathline[];
extern const char kWallsim[];
extern const char kMpirun[];
extern const char kSourceDir[];
extern const char kPanelScreenshot[];
extern const char kGstRtxReceiver[];

}  // namespace tilestream::testing::built

// As strings, to be joined with +.
#define RECEIVER_PATH std::string(::tilestream::testing::built::kReceiver)
#define STREAMER_PATH std::string(::tilestream::testing::built::kStreamer)
#define WALLCTL_PATH std::string(::tilestream::testing::built::kWallctl)
#define WALLCUT_PATH std::string(::tilestream::testing::built::kWallcut)
#define PATHLINE_PATH std::string(::tilestream::testing::built::kPathline)
#define WALLSIM_PATH std::string(::tilestream::testing::built::kWallsim)
#define MPIRUN_PATH std::string(::tilestream::testing::built::kMpirun)
#define TILESTREAM_SOURCE_DIR std::string(::tilestream::testing::built::kSourceDir)
#define PANEL_SCREENSHOT std::string(::tilestream::testing::built::kPanelScreenshot)
