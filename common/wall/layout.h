// Wall layout: columns x rows of tiles, tile names ("r1c3") and indices
// (row-major), and "WxH" size strings. Plain values, thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/base/result.h"

namespace tilestream {

// The largest layout we accept: a port per tile must fit above the port base.
inline constexpr uint32_t kMaxLayoutSide = 64;

struct Layout {
  uint32_t columns = 0;
  uint32_t rows = 0;
  uint32_t tile_count() const { return columns * rows; }
  std::string ToString() const;  // "5x3"
  bool operator==(const Layout&) const = default;
};

struct TileId {
  uint32_t row = 0;
  uint32_t column = 0;
  uint32_t Index(const Layout& layout) const { return row * layout.columns + column; }
  static TileId FromIndex(uint32_t index, const Layout& layout) {
    return {index / layout.columns, index % layout.columns};
  }
  std::string Name() const;  // "r0c1"
  bool operator==(const TileId&) const = default;
};

struct Size2 {
  uint32_t width = 0;
  uint32_t height = 0;
};

// "WxH" with W, H decimal in [min, max]. `what` names the value in errors.
Result<Size2> ParseSize(std::string_view text, std::string_view what, uint32_t min, uint32_t max);
// "CxR" with 1 <= C, R <= kMaxLayoutSide.
Result<Layout> ParseLayout(std::string_view text);
// "r<row>c<column>" inside `layout`.
Result<TileId> ParseTileName(std::string_view text, const Layout& layout);

}  // namespace tilestream
