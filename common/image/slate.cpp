#include "common/image/slate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "common/image/png.h"

namespace tilestream {

Result<Image> ReadSlate(const std::string& path) {
  char magic[8] = {};
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    std::fread(magic, 1, sizeof magic, f);
    std::fclose(f);
  } else {
    return Status::IoError("slate " + path, errno);
  }
  auto image = magic[0] == 'P' && magic[1] == '6' ? ReadPpm(path) : ReadPng(path, kMaxSlatePixels);
  if (!image.ok()) return Status::InvalidArgument("slate: " + image.status().message());
  if (uint64_t{image->width} * image->height > kMaxSlatePixels)
    return Status::InvalidArgument(fmt::format("slate {}: {}x{} is more than {} Mpixel", path,
                                               image->width, image->height, kMaxSlatePixels >> 20));
  return image;
}

std::vector<std::byte> SlateTile(const Image& picture, const WallSettings& wall, uint32_t tile) {
  const uint32_t tw = wall.tile.width, th = wall.tile.height;
  std::vector<std::byte> out(size_t{tw} * th * 3);  // black
  if (picture.width == 0 || picture.height == 0) return out;
  // Scale: the picture's pixel (sx, sy) covers wall pixels sx * scale on,
  // with scale = num / den, the smaller of the two axes' ratios.
  const uint64_t ww = wall.source_width(), wh = wall.source_height();
  const bool by_width = ww * picture.height <= wh * picture.width;
  const uint64_t num = by_width ? ww : wh, den = by_width ? picture.width : picture.height;
  const uint64_t shown_w = picture.width * num / den, shown_h = picture.height * num / den;
  const uint64_t left = (ww - shown_w) / 2, top = (wh - shown_h) / 2;
  const PixelOrigin o = TileOrigin(wall, tile);
  for (uint32_t y = 0; y < th; ++y) {
    const uint64_t wy = o.y + y;
    if (wy < top || wy >= top + shown_h) continue;
    const uint64_t sy = std::min<uint64_t>((wy - top) * den / num, picture.height - 1);
    for (uint32_t x = 0; x < tw; ++x) {
      const uint64_t wx = o.x + x;
      if (wx < left || wx >= left + shown_w) continue;
      const uint64_t sx = std::min<uint64_t>((wx - left) * den / num, picture.width - 1);
      const std::byte* p = &picture.rgb[(sy * picture.width + sx) * 3];
      std::copy(p, p + 3, &out[(size_t{y} * tw + x) * 3]);
    }
  }
  return out;
}

}  // namespace tilestream
