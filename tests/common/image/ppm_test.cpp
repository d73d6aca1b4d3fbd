#include "common/image/ppm.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/support/temp_dir.h"

namespace tilestream {
namespace {

using ::testing::HasSubstr;

std::vector<std::byte> Bytes(const std::string& s) {
  std::vector<std::byte> v;
  for (char c : s) v.push_back(std::byte(c));
  return v;
}

std::string Error(const std::string& file) {
  auto img = ParsePpm(Bytes(file), "x.ppm");
  EXPECT_FALSE(img.ok());
  return img.ok() ? "" : img.status().message();
}

TEST(Ppm, ParsesHeaderWithComments) {
  auto img = ParsePpm(Bytes("P6\n# made by hand\n2 1\n255\nabcdef"), "x.ppm");
  ASSERT_TRUE(img.ok()) << img.status().message();
  EXPECT_EQ(img->width, 2u);
  EXPECT_EQ(img->height, 1u);
  EXPECT_EQ(img->rgb[5], std::byte{'f'});
}

TEST(Ppm, WritesAndReadsBack) {
  testing::TempDir dir;
  std::vector<std::byte> rgb(4 * 3 * 3);
  for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = std::byte(i * 5);
  ASSERT_TRUE(WritePpm(dir / "a.ppm", 4, 3, rgb).ok());
  auto img = ReadPpm(dir / "a.ppm");
  ASSERT_TRUE(img.ok());
  EXPECT_TRUE(img->rgb == rgb);
}

TEST(Ppm, RejectsOtherFormats) {
  EXPECT_THAT(Error("P3\n1 1\n255\n0 0 0\n"), HasSubstr("not a binary PPM"));
  EXPECT_THAT(Error(""), HasSubstr("not a binary PPM"));
}

TEST(Ppm, RejectsSixteenBitImages) {
  EXPECT_THAT(Error("P6\n1 1\n65535\n012345"), HasSubstr("maxval 65535"));
}

TEST(Ppm, RejectsMalformedHeaders) {
  EXPECT_THAT(Error("P6\n1\n"), HasSubstr("malformed"));
  EXPECT_THAT(Error("P6 x 1 255\n"), HasSubstr("malformed"));
  EXPECT_THAT(Error("P6\n0 1\n255\n"), HasSubstr("out of range"));
  EXPECT_THAT(Error("P6\n99999999999 1\n255\n"), HasSubstr("malformed"));
  EXPECT_THAT(Error("P6\n70000 1\n255\n"), HasSubstr("out of range"));
}

TEST(Ppm, RejectsTruncatedPixels) {
  EXPECT_THAT(Error("P6\n2 2\n255\nabc"), HasSubstr("needs 12 bytes of pixels, the file has 3"));
}

TEST(Ppm, MissingFileIsAnIoError) { EXPECT_FALSE(ReadPpm("/nonexistent.ppm").ok()); }

}  // namespace
}  // namespace tilestream
