#include "common/image/slate.h"

#include <gtest/gtest.h>

#include <array>
#include <fstream>

#include "common/image/png.h"
#include "tests/support/temp_dir.h"

namespace tilestream {
namespace {

// A 2x2 wall of 4x2 tiles: an 8x4 source frame.
WallSettings SmallWall() {
  WallSettings w;
  w.layout = {2, 2};
  w.tile = {4, 2};
  return w;
}

// A picture whose every pixel says where it is: (x, y, 7).
Image Numbered(uint32_t width, uint32_t height) {
  Image p{width, height, std::vector<std::byte>(size_t{width} * height * 3)};
  for (uint32_t y = 0; y < height; ++y)
    for (uint32_t x = 0; x < width; ++x) {
      std::byte* px = &p.rgb[(size_t{y} * width + x) * 3];
      px[0] = std::byte(x), px[1] = std::byte(y), px[2] = std::byte{7};
    }
  return p;
}

// The picture's pixel shown at (x, y) of tile `tile`: {x, y, 7} or black {0, 0, 0}.
std::array<int, 3> At(const std::vector<std::byte>& tile, uint32_t x, uint32_t y) {
  const std::byte* p = &tile[(size_t{y} * 4 + x) * 3];
  return {int(p[0]), int(p[1]), int(p[2])};
}

TEST(Slate, APictureOfTheWallsSizeIsCutIntoItsTiles) {
  const Image p = Numbered(8, 4);
  const auto bottom_right = SlateTile(p, SmallWall(), 3);
  ASSERT_EQ(bottom_right.size(), 4u * 2 * 3);
  EXPECT_EQ(At(bottom_right, 0, 0), (std::array<int, 3>{4, 2, 7}));
  EXPECT_EQ(At(bottom_right, 3, 1), (std::array<int, 3>{7, 3, 7}));
  EXPECT_EQ(At(SlateTile(p, SmallWall(), 1), 1, 1), (std::array<int, 3>{5, 1, 7}));
}

TEST(Slate, ASmallerPictureIsScaledUpToTheNearestPixel) {
  const auto top_right = SlateTile(Numbered(4, 2), SmallWall(), 1);  // twice as large
  EXPECT_EQ(At(top_right, 0, 0), (std::array<int, 3>{2, 0, 7}));
  EXPECT_EQ(At(top_right, 1, 1), (std::array<int, 3>{2, 0, 7}));
  EXPECT_EQ(At(top_right, 3, 1), (std::array<int, 3>{3, 0, 7}));
}

TEST(Slate, APictureOfAnotherShapeKeepsItsAspectCentredOnBlack) {
  // 8x2 on the 8x4 wall: full width, rows 1 and 2 of the wall, black above and below.
  const Image wide = Numbered(8, 2);
  const auto top_left = SlateTile(wide, SmallWall(), 0);
  EXPECT_EQ(At(top_left, 2, 0), (std::array<int, 3>{0, 0, 0})) << "the bar above";
  EXPECT_EQ(At(top_left, 2, 1), (std::array<int, 3>{2, 0, 7}));
  const auto bottom_left = SlateTile(wide, SmallWall(), 2);
  EXPECT_EQ(At(bottom_left, 3, 0), (std::array<int, 3>{3, 1, 7}));
  EXPECT_EQ(At(bottom_left, 3, 1), (std::array<int, 3>{0, 0, 0})) << "the bar below";
  // 2x4 on the wall: columns 3 and 4 of it, scaled 1:1.
  const auto tall = SlateTile(Numbered(2, 4), SmallWall(), 0);
  EXPECT_EQ(At(tall, 2, 0), (std::array<int, 3>{0, 0, 0}));
  EXPECT_EQ(At(tall, 3, 1), (std::array<int, 3>{0, 1, 7}));
}

TEST(Slate, ReadsPngAndPpmAndSaysWhatIsWrongWithAnythingElse) {
  testing::TempDir dir;
  const Image p = Numbered(8, 4);
  auto png = EncodePng(p.width, p.height, p.rgb);
  ASSERT_TRUE(png.ok());
  std::ofstream(dir / "slate.png", std::ios::binary) << *png;
  ASSERT_TRUE(WritePpm(dir / "slate.ppm", p.width, p.height, p.rgb).ok());
  for (const std::string name : {"slate.png", "slate.ppm"}) {
    auto read = ReadSlate(dir / name);
    ASSERT_TRUE(read.ok()) << name << ": " << read.status().message();
    EXPECT_EQ(read->width, 8u);
    EXPECT_EQ(read->rgb, p.rgb) << name;
  }
  std::ofstream(dir / "notes.txt") << "not a picture";
  auto text = ReadSlate(dir / "notes.txt");
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("notes.txt"), std::string::npos)
      << text.status().message();
  auto missing = ReadSlate(dir / "none.png");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("none.png"), std::string::npos);
}

}  // namespace
}  // namespace tilestream
