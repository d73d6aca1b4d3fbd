// Where each tile goes in a window: the whole wall (bezels included, as black
// gaps) scaled to fit the window and centred, or any subset of its tiles; or
// a node's tiles side by side at their native size in one window spanning
// the node's displays (the bezels are real there).
// Pure arithmetic on the wall settings; no SDL or GL.
#pragma once

#include <cstdint>
#include <vector>

#include "common/wall/wall_config.h"

namespace tilestream {

struct TileView {
  uint32_t tile = 0;  // tile index
  int x = 0, y = 0;   // top-left corner in window pixels
  int width = 0, height = 0;
};

// Views for `tiles` (indices) showing the wall scaled by the largest factor
// that fits `window_width` x `window_height`, centred.
std::vector<TileView> MosaicLayout(const WallSettings& wall, const std::vector<uint32_t>& tiles,
                                   int window_width, int window_height);

// Views for `tiles` (indices) at native size, placed as on the wall without
// bezels, the top-left tile at (0, 0); *width and *height get the extent.
std::vector<TileView> SpanLayout(const WallSettings& wall, const std::vector<uint32_t>& tiles,
                                 int* width, int* height);

}  // namespace tilestream
