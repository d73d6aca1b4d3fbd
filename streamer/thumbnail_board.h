// The live picture of the wall on the coordinator (docs/control.md): the
// newest thumbnail of each tile, as its rank sent it (about once a second,
// common/image/thumbnail.h), composed into the wall with its bezels on
// request. Messages are checked before they are kept: a wrong tile or size
// is ignored. No MPI; not thread-safe (the coordinator's thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "common/image/ppm.h"
#include "common/image/thumbnail.h"
#include "common/wall/wall_config.h"

namespace tilestream {

// What precedes a thumbnail's pixels in its message (tile rank -> 0).
struct ThumbnailHeader {
  uint32_t tile = 0;
  uint32_t width = 0;
  uint32_t height = 0;
  uint32_t reserved = 0;
  uint64_t frame = 0;  // the movie frame it shows
};
inline constexpr size_t kThumbnailMessageMaxBytes = sizeof(ThumbnailHeader) + kThumbnailMaxBytes;

class ThumbnailBoard {
 public:
  explicit ThumbnailBoard(const WallSettings& wall);

  // A message as a tile rank sent it; false (nothing kept) if it is not a
  // thumbnail of a tile of this wall.
  bool Accept(std::span<const std::byte> message);

  // The wall: every tile's newest thumbnail at its place, bezels dark grey,
  // black where none came yet.
  Image Wall() const;
  // Tile `name`'s ("r0c1"): width 0 before the first; nothing if no such tile.
  std::optional<Image> Tile(std::string_view name) const;

 private:
  const WallSettings wall_;
  const ThumbnailSize size_;
  std::vector<std::vector<std::byte>> pixels_;  // per tile; empty until the first
};

}  // namespace tilestream
