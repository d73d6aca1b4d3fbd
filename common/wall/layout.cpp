#include "common/wall/layout.h"

#include <fmt/format.h>

#include "common/base/words.h"

namespace tilestream {
std::string Layout::ToString() const { return fmt::format("{}x{}", columns, rows); }

std::string TileId::Name() const { return fmt::format("r{}c{}", row, column); }

Result<Size2> ParseSize(std::string_view text, std::string_view what, uint32_t min, uint32_t max) {
  const size_t x = text.find('x');
  Size2 s;
  if (x == std::string_view::npos || !ParseInteger(text.substr(0, x), &s.width) ||
      !ParseInteger(text.substr(x + 1), &s.height)) {
    return Status::InvalidArgument(fmt::format("{} '{}' is not of the form WxH", what, text));
  }
  if (s.width < min || s.height < min || s.width > max || s.height > max) {
    return Status::InvalidArgument(
        fmt::format("{} '{}' is outside {}x{}..{}x{}", what, text, min, min, max, max));
  }
  return s;
}

Result<Layout> ParseLayout(std::string_view text) {
  auto s = ParseSize(text, "layout", 1, kMaxLayoutSide);
  if (!s.ok()) return s.status();
  return Layout{s->width, s->height};
}

Result<TileId> ParseTileName(std::string_view text, const Layout& layout) {
  const size_t c = text.find('c');
  TileId id;
  if (text.size() < 4 || text[0] != 'r' || c == std::string_view::npos ||
      !ParseInteger(text.substr(1, c - 1), &id.row) ||
      !ParseInteger(text.substr(c + 1), &id.column)) {
    return Status::InvalidArgument(
        fmt::format("tile name '{}' is not of the form r<row>c<column>", text));
  }
  if (id.row >= layout.rows || id.column >= layout.columns) {
    return Status::InvalidArgument(
        fmt::format("tile {} is outside the {} layout (rows 0..{}, columns 0..{})", text,
                    layout.ToString(), layout.rows - 1, layout.columns - 1));
  }
  return id;
}

}  // namespace tilestream
