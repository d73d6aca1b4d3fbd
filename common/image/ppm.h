// Binary PPM (P6, 8-bit) images: the simplest whole-wall frame format that
// ffmpeg, ImageMagick and netpbm all write (`ffmpeg -i x.mp4 frame%05d.ppm`),
// and what screenshots are saved as before conversion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/base/result.h"

namespace tilestream {

struct Image {
  uint32_t width = 0;
  uint32_t height = 0;
  std::vector<std::byte> rgb;  // row-major RGB24
};

// Parses a P6 image with maxval 255 (comments allowed). `name` is used in
// messages. Never reads beyond `data`.
Result<Image> ParsePpm(std::span<const std::byte> data, const std::string& name);
Result<Image> ReadPpm(const std::string& path);
Status WritePpm(const std::string& path, uint32_t width, uint32_t height,
                std::span<const std::byte> rgb);

}  // namespace tilestream
