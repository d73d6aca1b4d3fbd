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
#include "tools/wallcut/frame_source.h"

namespace tilestream {

// One directory of the cut: its tiles (empty: all). A wall over several
// servers is cut into a part per server (StoreParts).
struct StorePart {
  std::string dir;
  std::vector<uint32_t> tiles;
};

struct CutOptions {
  WallSettings wall;
  std::string out_dir;
  std::vector<StorePart> parts;     // empty: one store in out_dir
  std::vector<std::string> spread;  // tile files round-robin over these directories
  std::string title;
  bool overwrite = false;
  uint64_t max_frames = 0;                  // 0: all the source has
  bool progress = true;                     // a bar on a terminal
  const std::atomic<bool>* stop = nullptr;  // set (e.g. by SIGINT) to abort
};

// A part per server of a wall over several ([[server]]): OUT/NAME holding
// that server's tile files and the whole movie's manifest, so that copying
// OUT/NAME to the server's store is its whole deployment. None for a wall
// on one server.
std::vector<StorePart> StoreParts(const WallConfig& c, const std::string& out_dir);

// Returns the manifest of the first part.
Result<MovieManifest> CutMovie(FrameSource& source, const CutOptions& options);

}  // namespace tilestream
