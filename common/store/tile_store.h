// The tile store: a movie cut into one file per tile (docs/tile_store.md).
//
//   DIR/movie.toml       manifest: layout, tile size, fps, frames, stride,
//                        the file of each tile
//   tile_r0_c0.rgb ...   frames of one tile back to back, RGB24 rows with no
//                        padding, each frame padded to a 4096-byte stride so
//                        O_DIRECT reads land in aligned buffers with no copy
//
// Tile files may live in other directories (SSD mounts); the manifest then
// names them by absolute path. A store is valid only once movie.toml exists:
// the writer writes tile files under ".partial" names, renames them and
// writes the manifest last, and removes everything it wrote if it is aborted.
//
// TileStoreWriter and TileReader are movable, not copyable, and used by one
// thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/result.h"
#include "common/base/unique_fd.h"
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

class TileStoreWriter {
 public:
  struct Options {
    std::string directory;
    std::string title;
    Layout layout;
    TileGeometry tile;
    uint32_t bezel_x = 0, bezel_y = 0;
    double fps = 30;
    // Tile files go round-robin into these directories (empty: `directory`).
    std::vector<std::string> spread;
    // The tiles this store holds (empty: all). A server's part of a wall over
    // several servers holds its own tiles; its manifest lists every tile.
    std::vector<uint32_t> tiles;
    bool overwrite = false;  // replace an existing store
  };

  // Creates the directories. Refuses a directory that already holds a store
  // unless overwrite; an overwritten store is invalidated (manifest removed)
  // before anything else is written.
  static Result<TileStoreWriter> Create(const Options& options);

  TileStoreWriter(TileStoreWriter&&) noexcept;
  TileStoreWriter& operator=(TileStoreWriter&&) = delete;
  TileStoreWriter(const TileStoreWriter&) = delete;
  ~TileStoreWriter();  // Abort()s unless Finish succeeded

  // Appends the next frame of tile `tile_index`.
  // REQUIRES: frame.size() == tile.frame_bytes(); holds(tile_index).
  Status AppendFrame(uint32_t tile_index, std::span<const std::byte> frame);
  // Flushes, checks every tile has the same number of frames (> 0), renames
  // the files and writes the manifest. After an error the store is aborted.
  Status Finish();
  // Removes everything written. Idempotent.
  void Abort();

  const MovieManifest& manifest() const { return manifest_; }
  uint64_t bytes_written() const { return bytes_written_; }
  // Whether this store writes tile `tile_index` (false once finished or aborted).
  bool holds(uint32_t tile_index) const {
    return tile_index < fds_.size() && fds_[tile_index].get() >= 0;
  }

 private:
  TileStoreWriter() = default;
  MovieManifest manifest_;
  std::vector<UniqueFd> fds_;
  std::vector<uint64_t> frames_;
  uint64_t bytes_written_ = 0;
  bool done_ = false;
};

// Reads the frames of one tile.
class TileReader {
 public:
  // Opens the tile's file with O_DIRECT; where the file system refuses it
  // (tmpfs), falls back to buffered reads and warns once per process. The
  // file must have exactly frames * frame_stride bytes.
  static Result<TileReader> Open(const MovieManifest& m, uint32_t tile_index, bool direct = true);

  bool direct() const { return direct_; }
  uint64_t frames() const { return frames_; }
  size_t frame_stride() const { return stride_; }
  const std::string& path() const { return path_; }

  // Reads frame `index` (frame_stride bytes: pixels then padding) into dest.
  // REQUIRES: index < frames(); dest.data() aligned to kStoreAlignment;
  //           dest.size() >= frame_stride().
  Status ReadFrame(uint64_t index, std::span<std::byte> dest);

 private:
  TileReader() = default;
  Status FallBackToBuffered();
  UniqueFd fd_;
  bool direct_ = false;
  uint64_t frames_ = 0;
  size_t stride_ = 0;
  std::string path_;
};

// Makes TileReader::Open behave as on a file system that refuses O_DIRECT
// (EINVAL), to test the fallback where no such file system is at hand.
void SimulateODirectRefusalForTesting(bool refuse);

// Makes every TileReader::ReadFrame take at least `ns` (0: as the disk
// does), to test a disk slower than the wall.
void SimulateSlowDiskForTesting(int64_t ns);

}  // namespace tilestream
