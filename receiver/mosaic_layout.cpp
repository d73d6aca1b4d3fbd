#include "receiver/mosaic_layout.h"

#include <algorithm>
#include <cmath>

#include "common/wall_cutter.h"

namespace tilestream {

std::vector<TileView> MosaicLayout(const WallSettings& wall, const std::vector<uint32_t>& tiles, int window_width,
                                   int window_height) {
  const double scale = std::min(static_cast<double>(window_width) / wall.source_width(),
                                static_cast<double>(window_height) / wall.source_height());
  const double left = (window_width - wall.source_width() * scale) / 2;
  const double top = (window_height - wall.source_height() * scale) / 2;
  std::vector<TileView> views;
  for (uint32_t t : tiles) {
    const PixelOrigin o = TileOrigin(wall, t);
    // Round edges, not sizes, so neighbouring tiles never overlap or gap.
    const int x0 = static_cast<int>(std::lround(left + o.x * scale));
    const int y0 = static_cast<int>(std::lround(top + o.y * scale));
    const int x1 = static_cast<int>(std::lround(left + (o.x + wall.tile.width) * scale));
    const int y1 = static_cast<int>(std::lround(top + (o.y + wall.tile.height) * scale));
    views.push_back({t, x0, y0, x1 - x0, y1 - y0});
  }
  return views;
}

}  // namespace tilestream
