// A tile frame's thumbnail for the control room's live picture of the wall
// (docs/control.md): scaled down by a whole factor so that its longer side
// is at most kMaxSide pixels (2560x1600 -> 160x100), each pixel the mean of
// the 2x2 pixels at the centre of its block. Reads about 2 cache lines per
// thumbnail pixel (16,000 for 2560x1600), writes into the caller's buffer:
// no allocation. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tilestream {

struct ThumbnailSize {
  uint32_t width = 0;
  uint32_t height = 0;
  uint32_t factor = 1;  // tile pixels per thumbnail pixel, per side
  size_t bytes() const { return size_t{width} * height * 3; }
};

inline constexpr uint32_t kThumbnailMaxSide = 160;
inline constexpr size_t kThumbnailMaxBytes = size_t{kThumbnailMaxSide} * kThumbnailMaxSide * 3;

ThumbnailSize ThumbnailOf(uint32_t tile_width, uint32_t tile_height);

// `rgb`: a tile frame of tile_width x tile_height RGB24 pixels; `out`:
// size.bytes() bytes.
void MakeThumbnail(const std::byte* rgb, uint32_t tile_width, uint32_t tile_height,
                   ThumbnailSize size, std::byte* out);

}  // namespace tilestream
