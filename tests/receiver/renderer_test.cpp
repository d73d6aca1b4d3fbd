// Rendering under Xvfb with Mesa (real OpenGL): draw known frames, read the
// framebuffer back, compare pixels. Skipped without a display.
#include "receiver/renderer.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/support/packet_builder.h"

namespace tilestream {
namespace {

using testing::PatternFrame;

WallSettings Wall() {
  WallSettings w;
  w.layout = {2, 2};
  w.tile = {160, 100};
  w.bezel_x = 8;
  w.bezel_y = 4;
  return w;
}

std::unique_ptr<Renderer> MakeRenderer(const std::vector<TileView>& views, int w, int h) {
  if (!std::getenv("DISPLAY")) return nullptr;
  RendererOptions o;
  o.width = w;
  o.height = h;
  o.hidden = true;
  o.vsync = false;
  auto r = Renderer::Create(o, Wall().tile, views);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(r).value() : nullptr;
}

// At 1:1 every tile's pixels land exactly at its place in the wall, and the
// bezels between tiles stay black.
TEST(Renderer, MosaicAtFullSizeIsPixelExactWithBlackBezels) {
  const WallSettings wall = Wall();
  const int w = static_cast<int>(wall.source_width()), h = static_cast<int>(wall.source_height());
  const auto views = MosaicLayout(wall, {0, 1, 2, 3}, w, h);
  auto r = MakeRenderer(views, w, h);
  if (!r) GTEST_SKIP() << "no display (run under xvfb-run)";
  std::vector<std::vector<std::byte>> frames;
  for (uint32_t t = 0; t < 4; ++t) {
    frames.push_back(PatternFrame(wall.tile, 100 + t));
    r->Upload(t, frames.back().data());
  }
  r->Draw();
  const auto shot = r->ReadPixels();
  ASSERT_EQ(shot.size(), static_cast<size_t>(w) * h * 3);
  for (const TileView& v : views) {
    ASSERT_EQ(v.width, 160);
    for (int y = 0; y < v.height; ++y)
      for (int x = 0; x < v.width; ++x)
        for (int c = 0; c < 3; ++c)
          ASSERT_EQ(shot[(static_cast<size_t>(v.y + y) * w + v.x + x) * 3 + c],
                    frames[v.tile][(static_cast<size_t>(y) * 160 + x) * 3 + c])
              << "tile " << v.tile << " at " << x << "," << y;
  }
  for (int y = 0; y < h; ++y)  // the vertical bezel between the columns
    for (int x = 160; x < 168; ++x)
      for (int c = 0; c < 3; ++c) ASSERT_EQ(shot[(static_cast<size_t>(y) * w + x) * 3 + c], std::byte{0});
  r->Present();
}

TEST(Renderer, ANewUploadReplacesTheTilePicture) {
  const WallSettings wall = Wall();
  const std::vector<TileView> views = {{0, 0, 0, 160, 100}};  // one tile fills the window
  auto r = MakeRenderer(views, 160, 100);
  if (!r) GTEST_SKIP() << "no display (run under xvfb-run)";
  const auto a = PatternFrame(wall.tile, 1), b = PatternFrame(wall.tile, 2);
  r->Upload(0, a.data());
  r->Draw();
  r->Present();
  r->Upload(0, b.data());
  r->Draw();
  EXPECT_TRUE(r->ReadPixels() == b);
}

TEST(MosaicLayout, ScalesTheWallIntoTheWindowAndCentresIt) {
  const WallSettings wall = Wall();  // 328 x 204 with bezels
  const auto v = MosaicLayout(wall, {0, 1, 2, 3}, 164, 200);  // half width fits
  EXPECT_EQ(v[0].x, 0);
  EXPECT_EQ(v[0].width, 80);
  EXPECT_EQ(v[1].x, 84);  // (160 + 8) / 2
  EXPECT_EQ(v[0].y, (200 - 102) / 2);
  EXPECT_EQ(v[3].x + v[3].width, 164);
}

}  // namespace
}  // namespace tilestream
