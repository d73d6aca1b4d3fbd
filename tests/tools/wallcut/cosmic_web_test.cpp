#include "tools/wallcut/cosmic_web.h"

#include <gtest/gtest.h>

#include <span>
#include <vector>

namespace tilestream {
namespace {

std::vector<std::byte> Render(uint32_t w, uint32_t h, uint64_t seed, uint64_t frame,
                              uint64_t frames = 10) {
  CosmicWebOptions o;
  o.width = w;
  o.height = h;
  o.frames = frames;
  o.seed = seed;
  auto web = CosmicWeb::Create(o);
  EXPECT_TRUE(web.ok());
  std::vector<std::byte> f(size_t{w} * h * 3);
  web->Render(frame, f);
  return f;
}

uint64_t Fnv(const std::vector<std::byte>& v) {
  uint64_t h = 1469598103934665603ull;
  for (std::byte b : v) h = (h ^ static_cast<uint8_t>(b)) * 1099511628211ull;
  return h;
}

TEST(CosmicWeb, IsDeterministicBySeed) {
  EXPECT_EQ(Fnv(Render(320, 120, 7, 3)), Fnv(Render(320, 120, 7, 3)));
  EXPECT_NE(Fnv(Render(320, 120, 7, 3)), Fnv(Render(320, 120, 8, 3)));
}

TEST(CosmicWeb, EveryFrameDiffers) {
  CosmicWebOptions o;
  o.width = 200;
  o.height = 100;
  o.frames = 30;
  auto web = CosmicWeb::Create(o);
  ASSERT_TRUE(web.ok());
  std::vector<std::byte> f(200 * 100 * 3);
  std::vector<uint64_t> hashes;
  for (uint64_t i = 0; i < 30; ++i) {
    web->Render(i, f);
    hashes.push_back(Fnv(f));
  }
  std::sort(hashes.begin(), hashes.end());
  EXPECT_EQ(std::unique(hashes.begin(), hashes.end()), hashes.end());
}

// Filaments are bright on dark voids: a picture with contrast, not a field
// of one colour.
TEST(CosmicWeb, ShowsBrightFilamentsOnDarkVoids) {
  const auto f = Render(640, 240, 1, 9);
  size_t dark = 0, bright = 0;
  for (size_t p = 0; p < f.size(); p += 3) {
    const int lum =
        static_cast<int>(f[p]) + static_cast<int>(f[p + 1]) + static_cast<int>(f[p + 2]);
    dark += lum < 60;
    bright += lum > 300;
  }
  const size_t pixels = f.size() / 3;
  EXPECT_GT(dark, pixels / 4);
  EXPECT_GT(bright, pixels / 200);
}

TEST(CosmicWeb, RejectsEmptySizes) {
  CosmicWebOptions o;
  EXPECT_FALSE(CosmicWeb::Create(o).ok());
}

TEST(DrawNumber, DrawsDigitsWhiteOnDark) {
  std::vector<std::byte> img(20 * 10 * 3, std::byte{128});
  DrawNumber(img, 20, 10, 0, 0, 1, 1);
  auto px = [&](int x, int y) { return static_cast<int>(img[(size_t(y) * 20 + x) * 3]); };
  EXPECT_EQ(px(0, 0), 16);   // box border
  EXPECT_EQ(px(2, 1), 255);  // top of the "1" (middle column)
  EXPECT_EQ(px(1, 1), 16);
  EXPECT_EQ(px(1, 5), 255);  // its foot spans three columns
  EXPECT_EQ(px(3, 5), 255);
  EXPECT_EQ(px(10, 8), 128);  // outside the box: untouched
}

// A number that runs far outside a 4x4 image is drawn inside it only: the
// bytes after the image (a guard in the same allocation, so no sanitizer is
// needed to see an overrun) and the pixels above and left of the box stay.
TEST(DrawNumber, ClipsAtTheImageEdge) {
  constexpr size_t kImage = 4 * 4 * 3, kGuard = 256;
  std::vector<std::byte> memory(kImage + kGuard, std::byte{7});
  DrawNumber(std::span(memory).first(kImage), 4, 4, 2, 2, 123456, 3);
  for (size_t i = kImage; i < memory.size(); ++i) ASSERT_EQ(memory[i], std::byte{7}) << i;
  EXPECT_EQ(memory[0], std::byte{7});                // (0, 0): outside the box
  EXPECT_EQ(memory[(1 * 4 + 3) * 3], std::byte{7});  // (3, 1): above it
  EXPECT_NE(memory[(2 * 4 + 2) * 3], std::byte{7});  // (2, 2): its corner is drawn
  EXPECT_NE(memory[(3 * 4 + 3) * 3], std::byte{7});  // (3, 3): clipped, but inside
}

}  // namespace
}  // namespace tilestream
