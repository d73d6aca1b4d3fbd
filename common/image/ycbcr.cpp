#include "common/image/ycbcr.h"

#include <algorithm>

namespace tilestream {

namespace {

// R = y Y' + rv Cr', G = y Y' - gu Cb' - gv Cr', B = y Y' + bu Cb', with
// Y' = Y - 16 and C' = C - 128 (at 8 bits), in 65536ths.
struct Matrix {
  int32_t y, rv, gu, gv, bu;
};
constexpr Matrix kBt709{76309, 117489, 13975, 34925, 138438};
constexpr Matrix kBt601{76309, 104597, 25675, 53279, 132201};

struct Group {
  int32_t cb, y0, cr, y1;
};

Group Unpack(const uint8_t* p, int depth) {
  if (depth == 8) return {p[0], p[1], p[2], p[3]};
  return {(p[0] << 2) | (p[1] >> 6), ((p[1] & 0x3f) << 4) | (p[2] >> 4),
          ((p[2] & 0x0f) << 6) | (p[3] >> 2), ((p[3] & 0x03) << 8) | p[4]};
}

uint8_t Clamp(int64_t v, int shift) {
  return static_cast<uint8_t>(
      std::clamp<int64_t>((v + (int64_t{1} << (shift - 1))) >> shift, 0, 255));
}

void ToRgb(const Matrix& m, int32_t y, int32_t cb, int32_t cr, int shift, uint8_t* out) {
  const int64_t luma = int64_t{m.y} * y;
  out[0] = Clamp(luma + int64_t{m.rv} * cr, shift);
  out[1] = Clamp(luma - int64_t{m.gu} * cb - int64_t{m.gv} * cr, shift);
  out[2] = Clamp(luma + int64_t{m.bu} * cb, shift);
}

}  // namespace

std::optional<Colorimetry> ParseColorimetry(std::string_view name) {
  if (name == "BT709") return Colorimetry::kBt709;
  if (name == "BT601") return Colorimetry::kBt601;
  return std::nullopt;
}

size_t YCbCr422LineBytes(uint32_t width, int depth) {
  return size_t{width} / 2 * (depth == 10 ? 5 : 4);
}

void YCbCr422LineToRgb(const std::byte* line, uint32_t width, YCbCrFormat format, std::byte* rgb) {
  const Matrix& m = format.colorimetry == Colorimetry::kBt601 ? kBt601 : kBt709;
  const int extra = format.depth - 8;  // 10 bits: samples 4 times an 8-bit one's
  const int32_t y_zero = 16 << extra, c_zero = 128 << extra;
  const int shift = 16 + extra;
  const size_t group_bytes = format.depth == 10 ? 5 : 4;
  const auto* in = reinterpret_cast<const uint8_t*>(line);
  auto* out = reinterpret_cast<uint8_t*>(rgb);
  const uint32_t groups = width / 2;
  Group g = Unpack(in, format.depth);
  for (uint32_t i = 0; i < groups; ++i) {
    const Group next = i + 1 < groups ? Unpack(in + (i + 1) * group_bytes, format.depth) : g;
    const int32_t cb = g.cb - c_zero, cr = g.cr - c_zero;
    ToRgb(m, g.y0 - y_zero, cb, cr, shift, out);
    ToRgb(m, g.y1 - y_zero, (g.cb + next.cb) / 2 - c_zero, (g.cr + next.cr) / 2 - c_zero, shift,
          out + 3);
    out += 6;
    g = next;
  }
}

}  // namespace tilestream
