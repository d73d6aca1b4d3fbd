// PNG encoding for the pictures the coordinator serves (the wall's live
// thumbnail, a tile's): libpng's simplified API, RGB24 in, a PNG file's
// bytes out. Thread-safe; allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "common/base/result.h"

namespace tilestream {

// REQUIRES: rgb.size() >= width * height * 3.
Result<std::string> EncodePng(uint32_t width, uint32_t height, std::span<const std::byte> rgb);

}  // namespace tilestream
