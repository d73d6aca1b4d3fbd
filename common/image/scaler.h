// A picture of any size onto the wall (issue 44; docs/live.md): the wall's
// canvas (its tiles and the bezels between them, WallSettings'
// source_width x source_height) shows the picture scaled, its aspect kept
// with black bars by default (Fit::kBars) or stretched to fill it
// (Fit::kFill); a scaler draws one region of the canvas (a tile, or the
// whole of it). Bilinear, pixel centres aligned (as OpenGL and ffmpeg's
// `bilinear` sample), with 8 fractional bits per axis: a picture of the
// canvas's own size is copied pixel for pixel (a memcpy a row). Each output column's and
// row's taps are planned at construction; Scale allocates nothing and is
// thread-safe (const).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace tilestream {

enum class Fit : uint8_t { kBars, kFill };
std::optional<Fit> ParseFit(std::string_view name);  // "bars" or "fill"

struct ScaleRegion {
  uint32_t x = 0, y = 0, width = 0, height = 0;  // of the canvas
};

class RegionScaler {
 public:
  // REQUIRES: every size > 0; the region within the canvas.
  RegionScaler(uint32_t picture_width, uint32_t picture_height, uint32_t canvas_width,
               uint32_t canvas_height, ScaleRegion region, Fit fit);

  // `picture`: picture_width x picture_height RGB24, rows packed; `out`:
  // the region's width x height RGB24, rows packed.
  void Scale(const std::byte* picture, std::byte* out) const;

 private:
  struct Tap {
    int32_t first = -1;   // the picture's column (row) left of (above) the point; -1: a bar
    int32_t second = 0;   // the next one, or the same at the edge
    uint32_t weight = 0;  // of `second`, in 256ths
  };
  static std::vector<Tap> Plan(uint32_t picture, uint32_t canvas, uint32_t from, uint32_t count,
                               double scale, double offset);

  uint32_t picture_width_;
  std::vector<Tap> columns_, rows_;
  // The columns are the picture's own, one for one from copy_column_ (a
  // picture of the canvas's size, or a cut of it): a row of weight 0 is
  // copied, not interpolated.
  bool copy_columns_ = false;
  int32_t copy_column_ = 0;
};

}  // namespace tilestream
