// YCbCr 4:2:2 to RGB24 for pictures from outside (issue 44; docs/live.md):
// RFC 4175's pixel groups, two pixels each, at 8 bits (4 octets: Cb Y0 Cr
// Y1, which is also ffmpeg's `uyvy422`) and at 10 bits (5 octets: the same
// four samples of 10 bits, most significant bit first). Narrow range (Y
// 16-235, Cb and Cr 16-240, times 4 at 10 bits), BT.709 or BT.601
// coefficients. The chroma is co-sited with the even pixels (ST 2110-20):
// an odd pixel takes the mean of its neighbours'. Integer arithmetic with
// 16 fractional bits, rounded and clamped; no allocation; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tilestream {

enum class Colorimetry : uint8_t { kBt709, kBt601 };
std::optional<Colorimetry> ParseColorimetry(std::string_view name);  // "BT709", "BT601"

struct YCbCrFormat {
  int depth = 8;  // 8 or 10
  Colorimetry colorimetry = Colorimetry::kBt709;
};

// Octets of a line of `width` pixels (REQUIRES: width even).
size_t YCbCr422LineBytes(uint32_t width, int depth);

// One line: `width` pixels (even) from `line` (YCbCr422LineBytes octets)
// to `rgb` (width x 3 octets).
void YCbCr422LineToRgb(const std::byte* line, uint32_t width, YCbCrFormat format, std::byte* rgb);

}  // namespace tilestream
