#include "common/live/to_rgb.h"

#include <gtest/gtest.h>

#include <vector>

namespace tilestream {
namespace {

TEST(PictureToRgb, CopiesRgbAndConvertsEachLineOfYCbCr) {
  const TileGeometry rgb{4, 2};
  std::vector<std::byte> in(rgb.frame_bytes());
  for (size_t i = 0; i < in.size(); ++i) in[i] = std::byte(i);
  std::vector<std::byte> out(4 * 2 * 3);
  PictureToRgb(in.data(), rgb, Colorimetry::kBt709, out.data());
  EXPECT_EQ(out, in);

  // Two lines of 4 pixels at 8 bits: white, white, then black, black.
  const TileGeometry ycbcr{4, 2, Sampling::kYCbCr422_8};
  std::vector<std::byte> lines;
  for (int line = 0; line < 2; ++line)
    for (int v : {128, 235, 128, 235, 128, 16, 128, 16}) lines.push_back(std::byte(v));
  ASSERT_EQ(lines.size(), ycbcr.frame_bytes());
  PictureToRgb(lines.data(), ycbcr, Colorimetry::kBt709, out.data());
  for (int line = 0; line < 2; ++line)
    for (int x = 0; x < 4; ++x)
      EXPECT_EQ(out[(line * 4 + x) * 3 + 1], std::byte(x < 2 ? 255 : 0)) << line << " " << x;
}

}  // namespace
}  // namespace tilestream
