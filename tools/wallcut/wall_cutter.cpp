#include "tools/wallcut/wall_cutter.h"

#include <cstring>

namespace tilestream {

void CutTile(const WallSettings& wall, std::span<const std::byte> source, uint32_t tile_index,
             std::span<std::byte> out) {
  const PixelOrigin o = TileOrigin(wall, tile_index);
  const size_t source_row = size_t{wall.source_width()} * 3;
  const size_t tile_row = wall.tile.row_bytes();
  const std::byte* src = source.data() + o.y * source_row + size_t{o.x} * 3;
  for (uint32_t y = 0; y < wall.tile.height; ++y)
    std::memcpy(out.data() + y * tile_row, src + y * source_row, tile_row);
}

}  // namespace tilestream
