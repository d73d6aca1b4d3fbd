#include "common/image/thumbnail.h"

#include <algorithm>

namespace tilestream {

ThumbnailSize ThumbnailOf(uint32_t tile_width, uint32_t tile_height) {
  const uint32_t side = std::max(tile_width, tile_height);
  const uint32_t factor = std::max(1u, (side + kThumbnailMaxSide - 1) / kThumbnailMaxSide);
  return {std::max(1u, tile_width / factor), std::max(1u, tile_height / factor), factor};
}

namespace {

// The first of the (at most) two pixels sampled along an axis for output
// pixel i, and whether there is a second.
uint32_t Sampled(uint32_t i, uint32_t factor, uint32_t side, uint32_t next) {
  const uint32_t centre = i * factor + factor / 2;
  return std::min(side - 1 - next, centre > 0 && next ? centre - 1 : centre);
}

}  // namespace

void MakeThumbnail(const std::byte* rgb, uint32_t tile_width, uint32_t tile_height,
                   ThumbnailSize size, std::byte* out) {
  const size_t row_bytes = size_t{tile_width} * 3;
  const uint32_t next_x = size.factor > 1 && tile_width > 1 ? 1 : 0;
  const uint32_t next_y = size.factor > 1 && tile_height > 1 ? 1 : 0;
  for (uint32_t y = 0; y < size.height; ++y) {
    const std::byte* r0 = rgb + size_t{Sampled(y, size.factor, tile_height, next_y)} * row_bytes;
    const std::byte* r1 = r0 + next_y * row_bytes;
    for (uint32_t x = 0; x < size.width; ++x) {
      const size_t a = size_t{Sampled(x, size.factor, tile_width, next_x)} * 3,
                   b = a + size_t{next_x} * 3;
      for (size_t c = 0; c < 3; ++c) {
        const unsigned sum =
            std::to_integer<unsigned>(r0[a + c]) + std::to_integer<unsigned>(r0[b + c]) +
            std::to_integer<unsigned>(r1[a + c]) + std::to_integer<unsigned>(r1[b + c]);
        *out++ = static_cast<std::byte>((sum + 2) / 4);
      }
    }
  }
}

}  // namespace tilestream
