// Writes a movie into the tile store: tile files under ".partial" names,
// renamed when every tile is whole, the manifest written last; everything it
// wrote removed if it is aborted. Movable, not copyable; one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "common/base/unique_fd.h"
#include "common/store/movie_manifest.h"

namespace tilestream {

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

}  // namespace tilestream
