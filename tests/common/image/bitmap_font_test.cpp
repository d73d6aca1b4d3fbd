#include "common/image/bitmap_font.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tilestream {
namespace {

// The drawn text as rows of '#' (white) and '.' (the dark box).
std::vector<std::string> Draw(std::string_view text) {
  const uint32_t w = TextWidth(text, 1), h = TextHeight(1);
  std::vector<std::byte> img(size_t{w} * h * 3);
  DrawText(img, w, h, 0, 0, text, 1);
  std::vector<std::string> rows(h, std::string(w, '.'));
  for (uint32_t y = 0; y < h; ++y)
    for (uint32_t x = 0; x < w; ++x)
      rows[y][x] = img[(size_t{y} * w + x) * 3] == std::byte{255} ? '#' : '.';
  return rows;
}

TEST(BitmapFont, DrawsLettersAndDigitsInThreeByFive) {
  EXPECT_EQ(Draw("A7"), (std::vector<std::string>{
                            ".........",
                            "..#..###.",
                            ".#.#...#.",
                            ".###...#.",
                            ".#.#...#.",
                            ".#.#...#.",
                            ".........",
                        }));
}

TEST(BitmapFont, LowerCaseDrawsAsCapitalsAndUnknownAsBlank) {
  EXPECT_EQ(Draw("gbit/s"), Draw("GBIT/S"));
  EXPECT_EQ(Draw("~"), Draw(" "));
}

TEST(BitmapFont, EveryLetterHasAGlyph) {
  for (char c = 'A'; c <= 'Z'; ++c) EXPECT_NE(Draw(std::string(1, c)), Draw(" ")) << c;
}

TEST(BitmapFont, ClipsAtTheImageEdge) {
  std::vector<std::byte> img(4 * 4 * 3, std::byte{7});
  DrawText(img, 4, 4, 2, 2, "WALL 123", 3);  // would run far outside
  EXPECT_EQ(img[0], std::byte{7});
  EXPECT_EQ(img[(2 * 4 + 2) * 3], std::byte{16});
}

}  // namespace
}  // namespace tilestream
