#include "common/image/scaler.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>

namespace tilestream {

std::optional<Fit> ParseFit(std::string_view name) {
  if (name == "bars") return Fit::kBars;
  if (name == "fill") return Fit::kFill;
  return std::nullopt;
}

RegionScaler::RegionScaler(uint32_t picture_width, uint32_t picture_height, uint32_t canvas_width,
                           uint32_t canvas_height, ScaleRegion region, Fit fit)
    : picture_width_(picture_width) {
  double sx = double(canvas_width) / picture_width, sy = double(canvas_height) / picture_height;
  if (fit == Fit::kBars) sx = sy = std::min(sx, sy);
  // Where the picture starts on the canvas: centred, on whole pixels, so
  // that a picture of the canvas's size maps each pixel to one pixel.
  const double ox = std::floor((canvas_width - picture_width * sx) / 2);
  const double oy = std::floor((canvas_height - picture_height * sy) / 2);
  columns_ = Plan(picture_width, canvas_width, region.x, region.width, sx, ox);
  rows_ = Plan(picture_height, canvas_height, region.y, region.height, sy, oy);
  copy_column_ = columns_.empty() ? 0 : columns_[0].first;
  copy_columns_ = copy_column_ >= 0;
  for (size_t i = 0; i < columns_.size() && copy_columns_; ++i)
    copy_columns_ =
        columns_[i].first == copy_column_ + static_cast<int32_t>(i) && columns_[i].weight == 0;
}

// Canvas pixel c (its centre c + 0.5) shows the picture at
// (c + 0.5 - offset) / scale - 0.5; outside the picture's span, a bar.
std::vector<RegionScaler::Tap> RegionScaler::Plan(uint32_t picture, uint32_t canvas, uint32_t from,
                                                  uint32_t count, double scale, double offset) {
  std::vector<Tap> taps(count);
  const double span = picture * scale;
  for (uint32_t i = 0; i < count; ++i) {
    const double centre = from + i + 0.5 - offset;
    if (centre < 0 || centre >= span || from + i >= canvas) continue;  // a bar
    const double at = std::clamp(centre / scale - 0.5, 0.0, double(picture - 1));
    const auto first = static_cast<uint32_t>(at);
    Tap& t = taps[i];
    t.first = static_cast<int32_t>(first);
    t.second = static_cast<int32_t>(std::min(first + 1, picture - 1));
    t.weight = static_cast<uint32_t>(std::lround((at - first) * 256));
    if (t.weight == 256) {  // rounds to the next pixel
      t.first = t.second;
      t.weight = 0;
    }
  }
  return taps;
}

void RegionScaler::Scale(const std::byte* picture, std::byte* out) const {
  const size_t stride = size_t{picture_width_} * 3;
  for (const Tap& row : rows_) {
    if (row.first < 0) {
      std::memset(out, 0, columns_.size() * 3);
      out += columns_.size() * 3;
      continue;
    }
    if (copy_columns_ && row.weight == 0) {
      std::memcpy(out, picture + row.first * stride + size_t(copy_column_) * 3,
                  columns_.size() * 3);
      out += columns_.size() * 3;
      continue;
    }
    const auto* top = reinterpret_cast<const uint8_t*>(picture) + row.first * stride;
    const auto* bottom = reinterpret_cast<const uint8_t*>(picture) + row.second * stride;
    const uint32_t wy = row.weight;
    for (const Tap& column : columns_) {
      auto* o = reinterpret_cast<uint8_t*>(out);
      out += 3;
      if (column.first < 0) {
        o[0] = o[1] = o[2] = 0;
        continue;
      }
      const uint32_t wx = column.weight;
      const uint8_t* a = top + ptrdiff_t{column.first} * 3;
      const uint8_t* b = top + ptrdiff_t{column.second} * 3;
      const uint8_t* c = bottom + ptrdiff_t{column.first} * 3;
      const uint8_t* d = bottom + ptrdiff_t{column.second} * 3;
      for (int k = 0; k < 3; ++k) {
        const uint32_t upper = a[k] * (256 - wx) + b[k] * wx;
        const uint32_t lower = c[k] * (256 - wx) + d[k] * wx;
        o[k] = static_cast<uint8_t>((upper * (256 - wy) + lower * wy + 32768) >> 16);
      }
    }
  }
}

}  // namespace tilestream
