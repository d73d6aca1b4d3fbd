// A movie library (issue 36): a directory whose subdirectories holding a
// movie.toml are movies, each named by its directory. Scanning reads each
// manifest and checks, for the tiles this server holds, that their files
// are whole; it says of each movie whether it fits the wall and, if not,
// why. Nothing is opened for reading frames. Stateless; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "common/store/tile_store.h"
#include "common/wall/wall_config.h"

namespace tilestream {

// At most this many subdirectories are looked at (by name); the rest are
// left out of a scan, which says so.
inline constexpr size_t kMaxLibraryMovies = 1024;

struct LibraryMovie {
  std::string name;                       // the subdirectory's name
  std::optional<MovieManifest> manifest;  // none when movie.toml cannot be read
  uint64_t bytes = 0;                     // of the tile files found on this server
  std::string problem;                    // empty: it fits the wall; else why not
};

struct Library {
  std::vector<LibraryMovie> movies;  // by name
  bool truncated = false;            // more than kMaxLibraryMovies subdirectories
};

// Scans `path`. `here(tile)` says whether this server holds a tile's file
// (a wall over several servers); every tile when it is empty. An unreadable
// `path` is an error; an unreadable movie is listed with its problem.
Result<Library> ScanLibrary(const std::string& path, const WallSettings& wall,
                            const std::function<bool(uint32_t tile)>& here = {});

// The movie `name` of the library at `path` (REQUIRES: a valid name,
// common/control/control_protocol.h), looked at as ScanLibrary does; its
// problem says so when there is no such movie.
LibraryMovie LookUpMovie(const std::string& path, const std::string& name, const WallSettings& wall,
                         const std::function<bool(uint32_t tile)>& here = {});

}  // namespace tilestream
