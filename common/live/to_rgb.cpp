#include "common/live/to_rgb.h"

#include <cstring>

namespace tilestream {

void PictureToRgb(const std::byte* frame, const TileGeometry& geometry, Colorimetry colorimetry,
                  std::byte* rgb) {
  if (geometry.sampling == Sampling::kRgb8) {
    std::memcpy(rgb, frame, geometry.frame_bytes());
    return;
  }
  const YCbCrFormat format{geometry.sampling == Sampling::kYCbCr422_10 ? 10 : 8, colorimetry};
  const size_t in_row = geometry.row_bytes(), out_row = size_t{geometry.width} * 3;
  for (uint32_t y = 0; y < geometry.height; ++y)
    YCbCr422LineToRgb(frame + y * in_row, geometry.width, format, rgb + y * out_row);
}

}  // namespace tilestream
