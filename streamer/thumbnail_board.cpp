#include "streamer/thumbnail_board.h"

#include <algorithm>
#include <cstring>

namespace tilestream {
namespace {

constexpr std::byte kBezel{0x30};

}  // namespace

ThumbnailBoard::ThumbnailBoard(const WallSettings& wall)
    : wall_(wall),
      size_(ThumbnailOf(wall.tile.width, wall.tile.height)),
      pixels_(wall.layout.tile_count()) {}

bool ThumbnailBoard::Accept(std::span<const std::byte> message) {
  ThumbnailHeader h;
  if (message.size() < sizeof h) return false;
  std::memcpy(&h, message.data(), sizeof h);
  if (h.tile >= pixels_.size() || h.width != size_.width || h.height != size_.height ||
      message.size() != sizeof h + size_.bytes())
    return false;
  pixels_[h.tile].assign(message.begin() + sizeof h, message.end());
  return true;
}

Image ThumbnailBoard::Wall() const {
  const uint32_t f = size_.factor;
  const PixelOrigin last = TileOrigin(wall_, wall_.layout.tile_count() - 1);
  Image image;
  image.width = last.x / f + size_.width;
  image.height = last.y / f + size_.height;
  image.rgb.assign(size_t{image.width} * image.height * 3, kBezel);
  const size_t row = size_t{size_.width} * 3;
  for (uint32_t t = 0; t < pixels_.size(); ++t) {
    const PixelOrigin o = TileOrigin(wall_, t);
    for (uint32_t y = 0; y < size_.height; ++y) {
      std::byte* to = image.rgb.data() + ((size_t{o.y / f} + y) * image.width + o.x / f) * 3;
      if (pixels_[t].empty()) {
        std::fill_n(to, row, std::byte{0});
      } else {
        std::memcpy(to, pixels_[t].data() + y * row, row);
      }
    }
  }
  return image;
}

std::optional<Image> ThumbnailBoard::Tile(std::string_view name) const {
  for (uint32_t t = 0; t < pixels_.size(); ++t) {
    if (TileId::FromIndex(t, wall_.layout).Name() != name) continue;
    Image image;
    if (pixels_[t].empty()) return image;
    image.width = size_.width;
    image.height = size_.height;
    image.rgb = pixels_[t];
    return image;
  }
  return std::nullopt;
}

}  // namespace tilestream
