// A 3x5 pixel font (digits, capital letters, ". / : - %" and space) drawn
// into RGB24 images: frame numbers stamped on synthetic movies, and the
// receiver's overlay. Other characters draw as blanks. No allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace tilestream {

// Size in pixels of `text` drawn at `scale`: one pixel of margin around
// each 3x5 glyph and between glyphs.
inline uint32_t TextWidth(std::string_view text, uint32_t scale) {
  return (static_cast<uint32_t>(text.size()) * 4 + 1) * scale;
}
inline uint32_t TextHeight(uint32_t scale) { return 7 * scale; }

// Draws `text` white on a dark box with its top-left corner at (x, y) into
// an image of width x height RGB24 pixels, clipped at the image's edges.
// Lower-case letters draw as capitals.
void DrawText(std::span<std::byte> rgb, uint32_t width, uint32_t height, uint32_t x, uint32_t y,
              std::string_view text, uint32_t scale);

}  // namespace tilestream
