#include "common/image/ycbcr.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace tilestream {
namespace {

std::vector<std::byte> Bytes(std::initializer_list<int> v) {
  std::vector<std::byte> b;
  for (int x : v) b.push_back(static_cast<std::byte>(x));
  return b;
}

// The standard's formula in doubles (Kr, Kb of BT.709 or BT.601), from
// 8-bit narrow-range samples: what the integer conversion must match.
void Reference(double y, double cb, double cr, Colorimetry c, double rgb[3]) {
  const double kr = c == Colorimetry::kBt709 ? 0.2126 : 0.299;
  const double kb = c == Colorimetry::kBt709 ? 0.0722 : 0.114;
  const double kg = 1 - kr - kb;
  const double yn = (y - 16) / 219, pb = (cb - 128) / 224, pr = (cr - 128) / 224;
  const double r = yn + 2 * (1 - kr) * pr, b = yn + 2 * (1 - kb) * pb;
  const double g = (yn - kr * r - kb * b) / kg;
  for (int i = 0; i < 3; ++i)
    rgb[i] = std::clamp(std::round(255 * (i == 0 ? r : i == 1 ? g : b)), 0.0, 255.0);
}

TEST(YCbCr, BlackWhiteAndThePrimariesOfBt709) {
  const auto line = Bytes({128, 235, 128, 16});  // white, then black
  std::vector<std::byte> rgb(6);
  YCbCr422LineToRgb(line.data(), 2, {}, rgb.data());
  EXPECT_EQ(rgb, Bytes({255, 255, 255, 0, 0, 0}));
  // 100% red in BT.709: Y 63, Cb 102, Cr 240.
  const auto red = Bytes({102, 63, 240, 63});
  YCbCr422LineToRgb(red.data(), 2, {}, rgb.data());
  EXPECT_EQ(int(rgb[0]), 255);
  EXPECT_LE(int(rgb[1]), 1);  // the samples' own rounding
  EXPECT_LE(int(rgb[2]), 1);
}

// Every sample value against the standard's formula, both matrices:
// within 1 of it (the integer arithmetic's rounding).
TEST(YCbCr, EverySampleWithinOneOfTheFormula) {
  for (Colorimetry c : {Colorimetry::kBt709, Colorimetry::kBt601}) {
    int worst = 0;
    for (int y = 0; y < 256; y += 3)
      for (int cb = 0; cb < 256; cb += 5)
        for (int cr = 0; cr < 256; cr += 5) {
          const auto line = Bytes({cb, y, cr, y});
          std::vector<std::byte> rgb(6);
          YCbCr422LineToRgb(line.data(), 2, {8, c}, rgb.data());
          double want[3];
          Reference(y, cb, cr, c, want);
          for (int k = 0; k < 3; ++k) worst = std::max(worst, std::abs(int(rgb[k]) - int(want[k])));
        }
    EXPECT_LE(worst, 1) << (c == Colorimetry::kBt709 ? "BT.709" : "BT.601");
  }
}

// 10 bits: four samples of 10 bits in 5 octets, most significant bit
// first; samples that are an 8-bit one times 4 give the same pixels.
TEST(YCbCr, TenBitGroupsUnpackAndMatchTheirEightBitValues) {
  const int cb = 90 * 4, y0 = 200 * 4, cr = 170 * 4, y1 = 40 * 4;
  const uint64_t bits = (uint64_t(cb) << 30) | (uint64_t(y0) << 20) | (uint64_t(cr) << 10) | y1;
  std::vector<std::byte> ten;
  for (int i = 4; i >= 0; --i) ten.push_back(static_cast<std::byte>((bits >> (8 * i)) & 0xff));
  EXPECT_EQ(YCbCr422LineBytes(2, 10), 5u);
  std::vector<std::byte> from_ten(6), from_eight(6);
  YCbCr422LineToRgb(ten.data(), 2, {10, Colorimetry::kBt709}, from_ten.data());
  const auto eight = Bytes({90, 200, 170, 40});
  YCbCr422LineToRgb(eight.data(), 2, {8, Colorimetry::kBt709}, from_eight.data());
  EXPECT_EQ(from_ten, from_eight);
}

// The odd pixel's chroma is the mean of the pairs either side of it; the
// last pixel keeps its own pair's.
TEST(YCbCr, AnOddPixelTakesTheMeanOfItsNeighboursChroma) {
  const auto line = Bytes({16, 126, 128, 126, 240, 126, 128, 126});  // Cb from 16 to 240
  std::vector<std::byte> rgb(12), alone(6);
  YCbCr422LineToRgb(line.data(), 4, {}, rgb.data());
  const auto mid = Bytes({128, 126, 128, 126});  // Cb (16 + 240) / 2 = 128
  YCbCr422LineToRgb(mid.data(), 2, {}, alone.data());
  EXPECT_EQ(std::vector<std::byte>(rgb.begin() + 3, rgb.begin() + 6),
            std::vector<std::byte>(alone.begin(), alone.begin() + 3));
  EXPECT_EQ(std::vector<std::byte>(rgb.begin() + 6, rgb.begin() + 9),
            std::vector<std::byte>(rgb.begin() + 9, rgb.end()));
}

TEST(YCbCr, NamesOfTheColorimetries) {
  EXPECT_EQ(ParseColorimetry("BT709"), Colorimetry::kBt709);
  EXPECT_EQ(ParseColorimetry("BT601"), Colorimetry::kBt601);
  EXPECT_FALSE(ParseColorimetry("BT2020"));
}

}  // namespace
}  // namespace tilestream
