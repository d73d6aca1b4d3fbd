// A live source's picture as the wall's pixels: its frame of RFC 4175
// pixel groups (RGB, or YCbCr 4:2:2 at 8 or 10 bits) to RGB24, once per
// picture, straight into the picture ring's slot (issue 44; docs/live.md).
// No allocation; thread-safe.
#pragma once

#include <cstddef>

#include "common/image/ycbcr.h"
#include "common/wire/rfc4175.h"

namespace tilestream {

// `frame`: geometry.frame_bytes() of pgroups; `rgb`: width x height x 3.
void PictureToRgb(const std::byte* frame, const TileGeometry& geometry, Colorimetry colorimetry,
                  std::byte* rgb);

}  // namespace tilestream
