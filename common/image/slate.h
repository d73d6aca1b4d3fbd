// The slate: the picture an idle wall shows ([library] slate; a wall with
// a library started without a movie, until the first `load`). Any PNG or
// binary PPM, scaled to fit the wall's source frame with its aspect kept
// (nearest pixel), centred on black; each tile shows its part of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "common/image/ppm.h"
#include "common/wall/wall_config.h"

namespace tilestream {

// The picture at `path`: PNG or binary PPM, told by its first bytes. At
// most kMaxSlatePixels pixels.
inline constexpr uint64_t kMaxSlatePixels = uint64_t{256} << 20;
Result<Image> ReadSlate(const std::string& path);

// Tile `tile`'s frame of `picture` on `wall` (RGB24, the tile's size).
std::vector<std::byte> SlateTile(const Image& picture, const WallSettings& wall, uint32_t tile);

}  // namespace tilestream
