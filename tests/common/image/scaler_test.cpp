#include "common/image/scaler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace tilestream {
namespace {

std::vector<std::byte> Picture(uint32_t w, uint32_t h) {
  std::vector<std::byte> p(size_t{w} * h * 3);
  uint32_t v = 12345;
  for (std::byte& b : p) {
    v = v * 1103515245 + 12345;
    b = static_cast<std::byte>(v >> 23);
  }
  return p;
}

// Bilinear in doubles, written apart from the scaler: the picture scaled
// to `dw` x `dh` at (ox, oy) of the canvas, black elsewhere.
std::vector<double> Reference(const std::vector<std::byte>& p, uint32_t w, uint32_t h, uint32_t cw,
                              uint32_t ch, double dw, double dh, double ox, double oy) {
  std::vector<double> out(size_t{cw} * ch * 3, 0.0);
  const auto at = [&](uint32_t x, uint32_t y, int k) {
    return double(p[(size_t{y} * w + x) * 3 + k]);
  };
  for (uint32_t y = 0; y < ch; ++y)
    for (uint32_t x = 0; x < cw; ++x) {
      const double cx = x + 0.5 - ox, cy = y + 0.5 - oy;
      if (cx < 0 || cy < 0 || cx >= dw || cy >= dh) continue;
      const double sx = std::clamp(cx * w / dw - 0.5, 0.0, w - 1.0);
      const double sy = std::clamp(cy * h / dh - 0.5, 0.0, h - 1.0);
      const auto x0 = uint32_t(sx), y0 = uint32_t(sy);
      const uint32_t x1 = std::min(x0 + 1, w - 1), y1 = std::min(y0 + 1, h - 1);
      const double fx = sx - x0, fy = sy - y0;
      for (int k = 0; k < 3; ++k)
        out[(size_t{y} * cw + x) * 3 + k] =
            (at(x0, y0, k) * (1 - fx) + at(x1, y0, k) * fx) * (1 - fy) +
            (at(x0, y1, k) * (1 - fx) + at(x1, y1, k) * fx) * fy;
    }
  return out;
}

int WorstDifference(const std::vector<std::byte>& got, const std::vector<double>& want) {
  int worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::abs(int(got[i]) - int(std::lround(want[i]))));
  return worst;
}

// A picture of the canvas's own size is cut pixel for pixel.
TEST(RegionScaler, APictureOfTheCanvasSizeIsCopiedExactly) {
  const auto p = Picture(64, 40);
  RegionScaler s(64, 40, 64, 40, {16, 8, 32, 20}, Fit::kBars);
  std::vector<std::byte> out(32 * 20 * 3);
  s.Scale(p.data(), out.data());
  for (uint32_t y = 0; y < 20; ++y)
    ASSERT_TRUE(std::equal(out.begin() + y * 96, out.begin() + (y + 1) * 96,
                           p.begin() + ((8 + y) * 64 + 16) * 3))
        << "row " << y;
}

// 16:9 onto a 16:10 canvas: the aspect kept, black bars above and below;
// every pixel within 1 of bilinear computed in doubles.
TEST(RegionScaler, TheAspectIsKeptWithBarsAndEveryPixelIsBilinear) {
  const auto p = Picture(48, 27);
  RegionScaler s(48, 27, 64, 40, {0, 0, 64, 40}, Fit::kBars);
  std::vector<std::byte> out(64 * 40 * 3);
  s.Scale(p.data(), out.data());
  // 64 wide: 36 high, 2 rows of bars above and below.
  const auto want = Reference(p, 48, 27, 64, 40, 64, 36, 0, 2);
  EXPECT_LE(WorstDifference(out, want), 1);
  for (size_t i = 0; i < 64 * 3; ++i) {
    EXPECT_EQ(int(out[i]), 0);
    EXPECT_EQ(int(out[out.size() - 1 - i]), 0);
  }
}

// `fill` stretches each axis on its own; a region is the same as that
// part of the whole canvas (the tiles of a wall agree at their seams).
TEST(RegionScaler, FillStretchesAndARegionIsItsPartOfTheWhole) {
  const auto p = Picture(50, 30);
  RegionScaler whole(50, 30, 70, 44, {0, 0, 70, 44}, Fit::kFill);
  std::vector<std::byte> all(70 * 44 * 3);
  whole.Scale(p.data(), all.data());
  EXPECT_LE(WorstDifference(all, Reference(p, 50, 30, 70, 44, 70, 44, 0, 0)), 1);
  RegionScaler part(50, 30, 70, 44, {30, 20, 40, 24}, Fit::kFill);
  std::vector<std::byte> region(40 * 24 * 3);
  part.Scale(p.data(), region.data());
  for (uint32_t y = 0; y < 24; ++y)
    ASSERT_TRUE(std::equal(region.begin() + y * 120, region.begin() + (y + 1) * 120,
                           all.begin() + ((20 + y) * 70 + 30) * 3))
        << "row " << y;
}

// Smaller than the canvas: scaled up (bars left and right here).
TEST(RegionScaler, ASmallPictureIsScaledUp) {
  const auto p = Picture(8, 8);
  RegionScaler s(8, 8, 40, 20, {0, 0, 40, 20}, Fit::kBars);
  std::vector<std::byte> out(40 * 20 * 3);
  s.Scale(p.data(), out.data());
  EXPECT_LE(WorstDifference(out, Reference(p, 8, 8, 40, 20, 20, 20, 10, 0)), 1);
}

TEST(RegionScaler, NamesOfTheFits) {
  EXPECT_EQ(ParseFit("bars"), Fit::kBars);
  EXPECT_EQ(ParseFit("fill"), Fit::kFill);
  EXPECT_FALSE(ParseFit("crop"));
}

}  // namespace
}  // namespace tilestream
