#include "common/image/bitmap_font.h"

#include <algorithm>
#include <array>

namespace tilestream {
namespace {

// 15 bits per glyph from five rows of three, the top-left pixel in bit 14.
using Row = const char (&)[4];
constexpr uint16_t Glyph(Row a, Row b, Row c, Row d, Row e) {
  uint16_t bits = 0;
  for (const char* row : {a, b, c, d, e})
    for (int i = 0; i < 3; ++i) bits = static_cast<uint16_t>((bits << 1) | (row[i] == '#' ? 1 : 0));
  return bits;
}

constexpr std::array<uint16_t, 128> MakeFont() {
  std::array<uint16_t, 128> f{};
  const uint16_t digits[10] = {0x7B6F, 0x2C97, 0x73E7, 0x73CF, 0x5BC9,
                               0x79CF, 0x79EF, 0x7249, 0x7BEF, 0x7BCF};
  for (int d = 0; d < 10; ++d) f['0' + d] = digits[d];
  f['A'] = Glyph(".#.", "#.#", "###", "#.#", "#.#");
  f['B'] = Glyph("##.", "#.#", "##.", "#.#", "##.");
  f['C'] = Glyph(".##", "#..", "#..", "#..", ".##");
  f['D'] = Glyph("##.", "#.#", "#.#", "#.#", "##.");
  f['E'] = Glyph("###", "#..", "##.", "#..", "###");
  f['F'] = Glyph("###", "#..", "##.", "#..", "#..");
  f['G'] = Glyph(".##", "#..", "#.#", "#.#", ".##");
  f['H'] = Glyph("#.#", "#.#", "###", "#.#", "#.#");
  f['I'] = Glyph("###", ".#.", ".#.", ".#.", "###");
  f['J'] = Glyph("..#", "..#", "..#", "#.#", ".#.");
  f['K'] = Glyph("#.#", "#.#", "##.", "#.#", "#.#");
  f['L'] = Glyph("#..", "#..", "#..", "#..", "###");
  f['M'] = Glyph("#.#", "###", "###", "#.#", "#.#");
  f['N'] = Glyph("##.", "#.#", "#.#", "#.#", "#.#");
  f['O'] = Glyph(".#.", "#.#", "#.#", "#.#", ".#.");
  f['P'] = Glyph("##.", "#.#", "##.", "#..", "#..");
  f['Q'] = Glyph(".#.", "#.#", "#.#", "##.", ".##");
  f['R'] = Glyph("##.", "#.#", "##.", "#.#", "#.#");
  f['S'] = Glyph(".##", "#..", ".#.", "..#", "##.");
  f['T'] = Glyph("###", ".#.", ".#.", ".#.", ".#.");
  f['U'] = Glyph("#.#", "#.#", "#.#", "#.#", "###");
  f['V'] = Glyph("#.#", "#.#", "#.#", "#.#", ".#.");
  f['W'] = Glyph("#.#", "#.#", "###", "###", "#.#");
  f['X'] = Glyph("#.#", "#.#", ".#.", "#.#", "#.#");
  f['Y'] = Glyph("#.#", "#.#", ".#.", ".#.", ".#.");
  f['Z'] = Glyph("###", "..#", ".#.", "#..", "###");
  f['.'] = Glyph("...", "...", "...", "...", ".#.");
  f['/'] = Glyph("..#", "..#", ".#.", "#..", "#..");
  f[':'] = Glyph("...", ".#.", "...", ".#.", "...");
  f['-'] = Glyph("...", "...", "###", "...", "...");
  f['%'] = Glyph("#.#", "..#", ".#.", "#..", "#.#");
  return f;
}

constexpr std::array<uint16_t, 128> kFont = MakeFont();

}  // namespace

void DrawText(std::span<std::byte> rgb, uint32_t width, uint32_t height, uint32_t x, uint32_t y,
              std::string_view text, uint32_t scale) {
  const uint32_t box_w = TextWidth(text, scale), box_h = TextHeight(scale);
  for (uint32_t py = y; py < std::min(height, y + box_h); ++py) {
    for (uint32_t px = x; px < std::min(width, x + box_w); ++px) {
      const uint32_t cx = (px - x) / scale, cy = (py - y) / scale;
      bool on = false;
      if (cy >= 1 && cy <= 5 && cx >= 1 && (cx - 1) % 4 < 3) {
        const size_t i = (cx - 1) / 4;
        if (i < text.size()) {
          unsigned char c = static_cast<unsigned char>(text[i]);
          if (c >= 'a' && c <= 'z') c = static_cast<unsigned char>(c - 'a' + 'A');
          const uint32_t bit = (cy - 1) * 3 + (cx - 1) % 4;
          on = c < 128 && ((kFont[c] >> (14 - bit)) & 1);
        }
      }
      std::byte* p = rgb.data() + (size_t{py} * width + px) * 3;
      p[0] = p[1] = p[2] = on ? std::byte{255} : std::byte{16};
    }
  }
}

}  // namespace tilestream
