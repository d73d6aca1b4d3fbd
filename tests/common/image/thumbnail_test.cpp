#include "common/image/thumbnail.h"

#include <gtest/gtest.h>
#include <png.h>

#include <vector>

#include "common/image/png.h"

namespace tilestream {
namespace {

TEST(Thumbnail, TheLongerSideComesToAtMost160ByAWholeFactor) {
  const ThumbnailSize reference = ThumbnailOf(2560, 1600);
  EXPECT_EQ(reference.factor, 16u);
  EXPECT_EQ(reference.width, 160u);
  EXPECT_EQ(reference.height, 100u);
  const ThumbnailSize small = ThumbnailOf(160, 100);
  EXPECT_EQ(small.factor, 1u);
  EXPECT_EQ(small.width, 160u);
  const ThumbnailSize odd = ThumbnailOf(1000, 3);
  EXPECT_EQ(odd.factor, 7u);
  EXPECT_EQ(odd.width, 142u);
  EXPECT_EQ(odd.height, 1u);
  EXPECT_LE(ThumbnailOf(65535, 65535).bytes(), kThumbnailMaxBytes);
}

// Each thumbnail pixel is the mean of the 2x2 pixels at its block's centre.
TEST(Thumbnail, APixelIsTheMeanOfItsBlocksCentre) {
  const uint32_t w = 8, h = 4;  // factor 1: a copy
  std::vector<std::byte> frame(w * h * 3);
  for (size_t i = 0; i < frame.size(); ++i) frame[i] = std::byte(i % 251);
  const ThumbnailSize same = ThumbnailOf(w, h);
  std::vector<std::byte> out(same.bytes());
  MakeThumbnail(frame.data(), w, h, same, out.data());
  EXPECT_EQ(out, frame);

  const uint32_t big_w = 320, big_h = 4;  // factor 2: each block is its own 2x2
  std::vector<std::byte> big(big_w * big_h * 3, std::byte{0});
  // Block (0,0): pixels (0,0)=0 (1,0)=40 (0,1)=80 (1,1)=120 in red.
  big[3] = std::byte{40};
  big[big_w * 3] = std::byte{80};
  big[big_w * 3 + 3] = std::byte{120};
  const ThumbnailSize half = ThumbnailOf(big_w, big_h);
  ASSERT_EQ(half.factor, 2u);
  std::vector<std::byte> small(half.bytes());
  MakeThumbnail(big.data(), big_w, big_h, half, small.data());
  EXPECT_EQ(small[0], std::byte{60});
  EXPECT_EQ(small[1], std::byte{0});
}

TEST(Thumbnail, ATileOnePixelHighReadsNothingOutside) {
  const uint32_t w = 1000, h = 1;
  std::vector<std::byte> frame(w * h * 3, std::byte{200});
  const ThumbnailSize s = ThumbnailOf(w, h);
  std::vector<std::byte> out(s.bytes());
  MakeThumbnail(frame.data(), w, h, s, out.data());  // ASan would see a read outside
  for (std::byte b : out) EXPECT_EQ(b, std::byte{200});
}

TEST(Png, EncodesWhatLibpngReadsBack) {
  const uint32_t w = 5, h = 3;
  std::vector<std::byte> rgb(w * h * 3);
  for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = std::byte(i * 7);
  auto png = EncodePng(w, h, rgb);
  ASSERT_TRUE(png.ok()) << png.status().message();
  EXPECT_EQ(png->substr(1, 3), "PNG");
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  ASSERT_TRUE(png_image_begin_read_from_memory(&image, png->data(), png->size()));
  image.format = PNG_FORMAT_RGB;
  std::vector<std::byte> back(PNG_IMAGE_SIZE(image));
  ASSERT_TRUE(png_image_finish_read(&image, nullptr, back.data(), 0, nullptr));
  EXPECT_EQ(image.width, w);
  EXPECT_EQ(back, rgb);
  EXPECT_FALSE(EncodePng(0, 3, rgb).ok());
}

}  // namespace
}  // namespace tilestream
