// PNG encoding for the pictures the coordinator serves (the wall's live
// thumbnail, a tile's), and decoding of the pictures an operator gives
// (the idle wall's slate): libpng's simplified API, RGB24 in and out.
// Thread-safe; allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "common/base/result.h"
#include "common/image/ppm.h"

namespace tilestream {

// REQUIRES: rgb.size() >= width * height * 3.
Result<std::string> EncodePng(uint32_t width, uint32_t height, std::span<const std::byte> rgb);
// The PNG file at `path` as RGB24 (any colour type; alpha dropped, gray
// spread), refused past `max_pixels`.
Result<Image> ReadPng(const std::string& path, uint64_t max_pixels);

}  // namespace tilestream
