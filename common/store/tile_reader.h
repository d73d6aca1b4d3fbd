// Reads the frames of one tile from the tile store, with O_DIRECT where the
// file system allows it. Movable, not copyable; one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "common/base/result.h"
#include "common/base/unique_fd.h"
#include "common/store/movie_manifest.h"

namespace tilestream {

// What a test puts in a reader's way where no such disk is at hand.
struct DiskFaults {
  bool refuse_direct = false;  // open() refuses O_DIRECT (EINVAL), as tmpfs does
  int64_t read_ns = 0;         // every ReadFrame takes at least this long
};

// Reads the frames of one tile.
class TileReader {
 public:
  // Opens the tile's file with O_DIRECT; where the file system refuses it
  // (tmpfs), falls back to buffered reads and warns once per process. The
  // file must have exactly frames * frame_stride bytes.
  static Result<TileReader> Open(const MovieManifest& m, uint32_t tile_index, bool direct = true,
                                 const DiskFaults& faults = {});

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
  void WaitAsASlowDisk() const;
  UniqueFd fd_;
  bool direct_ = false;
  uint64_t frames_ = 0;
  size_t stride_ = 0;
  std::string path_;
  int64_t read_ns_ = 0;
};

}  // namespace tilestream
