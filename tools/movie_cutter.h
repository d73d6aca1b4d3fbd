// The cut: whole-wall frames from a FrameSource -> tiles (bezels dropped)
// -> a tile store. Either the store is complete and valid, or nothing that
// looks like one is left behind (bad input, disk full, interruption).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "common/store/tile_store.h"
#include "common/wall/wall_config.h"
#include "tools/frame_source.h"

namespace tilestream {

struct CutOptions {
  WallSettings wall;
  std::string out_dir;
  std::vector<std::string> spread;  // tile files round-robin over these directories
  std::string title;
  bool overwrite = false;
  uint64_t max_frames = 0;                  // 0: all the source has
  bool progress = true;                     // a bar on a terminal
  const std::atomic<bool>* stop = nullptr;  // set (e.g. by SIGINT) to abort
};

Result<MovieManifest> CutMovie(FrameSource& source, const CutOptions& options);

}  // namespace tilestream
