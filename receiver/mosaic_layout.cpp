#include "receiver/mosaic_layout.h"

#include <algorithm>
#include <climits>
#include <cmath>

#include "common/wall/wall_config.h"

namespace tilestream {

std::vector<TileView> MosaicLayout(const WallSettings& wall, const std::vector<uint32_t>& tiles,
                                   int window_width, int window_height) {
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

std::vector<TileView> SpanLayout(const WallSettings& wall, const std::vector<uint32_t>& tiles,
                                 int* width, int* height) {
  uint32_t min_row = UINT32_MAX, min_column = UINT32_MAX, max_row = 0, max_column = 0;
  for (uint32_t t : tiles) {
    const TileId id = TileId::FromIndex(t, wall.layout);
    min_row = std::min(min_row, id.row), max_row = std::max(max_row, id.row);
    min_column = std::min(min_column, id.column), max_column = std::max(max_column, id.column);
  }
  const int w = static_cast<int>(wall.tile.width), h = static_cast<int>(wall.tile.height);
  std::vector<TileView> views;
  for (uint32_t t : tiles) {
    const TileId id = TileId::FromIndex(t, wall.layout);
    views.push_back({t, static_cast<int>(id.column - min_column) * w,
                     static_cast<int>(id.row - min_row) * h, w, h});
  }
  *width = tiles.empty() ? 0 : static_cast<int>(max_column - min_column + 1) * w;
  *height = tiles.empty() ? 0 : static_cast<int>(max_row - min_row + 1) * h;
  return views;
}

}  // namespace tilestream
