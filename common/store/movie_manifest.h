// A movie's manifest in the tile store (DIR/movie.toml; docs/tile_store.md):
// what it holds, reading and checking it, writing it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/result.h"
#include "common/wall/layout.h"
#include "common/wall/wall_config.h"
#include "common/wire/rfc4175.h"

namespace tilestream {

inline constexpr size_t kStoreAlignment = 4096;
inline constexpr const char* kManifestName = "movie.toml";

// Bytes a frame of `tile` occupies in its file: frame_bytes rounded up to 4096.
size_t FrameStride(const TileGeometry& tile);
// "tile_r0_c1.rgb"
std::string TileFileName(const TileId& id);

struct MovieManifest {
  std::string directory;  // where movie.toml is; set by the loader
  std::string title;
  Layout layout;
  TileGeometry tile;
  uint32_t bezel_x = 0;  // the bezels the movie was cut for (information)
  uint32_t bezel_y = 0;
  double fps = 30;
  uint64_t frames = 0;
  size_t frame_stride = 0;
  std::vector<std::string> tile_files;  // per tile index; relative to directory or absolute

  std::string TilePath(uint32_t tile_index) const;
};

// Parses and checks a manifest (fields, ranges, every tile listed once).
// `directory` is recorded; `source` names the file in messages.
Result<MovieManifest> ParseManifest(std::string_view toml_text, const std::string& directory,
                                    const std::string& source);
std::string ManifestToToml(const MovieManifest& m);

// Loads DIR/movie.toml and, with `check_files`, checks that every tile file
// exists with exactly frames * frame_stride bytes. Without, only the manifest
// is read: a streamer spread over several hosts holds only its own tiles,
// and each TileReader checks its file.
Result<MovieManifest> OpenTileStore(const std::string& directory, bool check_files = true);

// The movie must have the wall's layout and tile size.
Status CheckManifestMatchesWall(const MovieManifest& m, const WallSettings& wall);

}  // namespace tilestream
