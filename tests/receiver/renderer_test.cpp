// Rendering under Xvfb with Mesa (real OpenGL): draw known frames, read the
// framebuffer back, compare pixels. Skipped without a display.
#include "receiver/renderer.h"

#include <SDL2/SDL.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "common/image/bitmap_font.h"
#include "common/image/ppm.h"
#include "receiver/node_display.h"
#include "tests/support/packet_builder.h"
#include "tests/support/temp_dir.h"

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
      for (int c = 0; c < 3; ++c)
        ASSERT_EQ(shot[(static_cast<size_t>(y) * w + x) * 3 + c], std::byte{0});
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
  const WallSettings wall = Wall();                           // 328 x 204 with bezels
  const auto v = MosaicLayout(wall, {0, 1, 2, 3}, 164, 200);  // half width fits
  EXPECT_EQ(v[0].x, 0);
  EXPECT_EQ(v[0].width, 80);
  EXPECT_EQ(v[1].x, 84);  // (160 + 8) / 2
  EXPECT_EQ(v[0].y, (200 - 102) / 2);
  EXPECT_EQ(v[3].x + v[3].width, 164);
}

TEST(Renderer, TheOverlayDrawsItsTextOverTheTileCorner) {
  const WallSettings wall = Wall();
  auto r = MakeRenderer({{0, 0, 0, 160, 100}}, 160, 100);
  if (!r) GTEST_SKIP() << "no display (run under xvfb-run)";
  const auto frame = PatternFrame(wall.tile, 3);
  r->Upload(0, frame.data());
  const std::string text = "R0C0 30 FPS";
  r->SetOverlay(0, text);
  r->Draw();
  const auto shot = r->ReadPixels();
  const uint32_t tw = TextWidth(text, 2), th = TextHeight(2);  // scale 2 at this size
  std::vector<std::byte> expected(size_t{tw} * th * 3);
  DrawText(expected, tw, th, 0, 0, text, 2);
  for (uint32_t y = 0; y < th; ++y)
    for (uint32_t x = 0; x < tw; ++x)
      ASSERT_EQ(shot[((y + 8) * 160 + x + 8) * 3], expected[(size_t{y} * tw + x) * 3])
          << x << "," << y;
  EXPECT_EQ(shot[0], frame[0]) << "outside the overlay: the tile";
  r->SetOverlay(0, "");
  r->Draw();
  EXPECT_TRUE(r->ReadPixels() == frame) << "toggled off";
}

// The node's tiles r0c1 and r1c1 (one column) as a display node shows them.
class NodeDisplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::getenv("DISPLAY")) GTEST_SKIP() << "no display (run under xvfb-run)";
    config_ = DefaultWallConfig({2, 2});
    config_.wall = Wall();
    for (uint32_t t = 0; t < 4; ++t) frames_.push_back(PatternFrame(Wall().tile, 200 + t));
  }

  // Shows tiles 1 and 3 in `mode` and returns the screenshots' pixels.
  std::vector<std::vector<std::byte>> Show(DisplayMode mode,
                                           std::vector<std::pair<uint32_t, uint32_t>>* sizes) {
    NodeDisplayOptions o;
    o.mode = mode;
    o.windowed = true;
    o.hidden = true;
    auto d = NodeDisplay::Create(config_, 0, {1, 3}, o);
    EXPECT_TRUE(d.ok()) << d.status().message();
    if (!d.ok()) return {};
    (*d)->Upload(0, frames_[1].data());
    (*d)->Upload(1, frames_[3].data());
    EXPECT_TRUE((*d)->Screenshot(dir_ / "shot.ppm").ok());
    std::vector<std::vector<std::byte>> shots;
    for (const char* name : {"shot.ppm", "shot-0.ppm", "shot-1.ppm"}) {
      if (!std::filesystem::exists(dir_ / name)) continue;
      auto image = ReadPpm(dir_ / name);
      EXPECT_TRUE(image.ok());
      sizes->emplace_back(image->width, image->height);
      shots.push_back(image->rgb);
    }
    return shots;
  }

  WallConfig config_;
  std::vector<std::vector<std::byte>> frames_;
  testing::TempDir dir_;
};

TEST_F(NodeDisplayTest, OneWindowPerTileShowsEachTileWhole) {
  std::vector<std::pair<uint32_t, uint32_t>> sizes;
  const auto shots = Show(DisplayMode::kTiles, &sizes);
  ASSERT_EQ(shots.size(), 2u);
  EXPECT_EQ(sizes[0], std::make_pair(160u, 100u));
  EXPECT_TRUE(shots[0] == frames_[1]);
  EXPECT_TRUE(shots[1] == frames_[3]);
}

TEST_F(NodeDisplayTest, ASpanningWindowPlacesTheTilesAsOnTheWallWithoutBezels) {
  std::vector<std::pair<uint32_t, uint32_t>> sizes;
  const auto shots = Show(DisplayMode::kSpan, &sizes);
  ASSERT_EQ(shots.size(), 1u);
  ASSERT_EQ(sizes[0], std::make_pair(160u, 200u));  // r0c1 above r1c1
  std::vector<std::byte> expected(frames_[1]);
  expected.insert(expected.end(), frames_[3].begin(), frames_[3].end());
  EXPECT_TRUE(shots[0] == expected);
}

// The window's keys become control commands (sent on the sync connection).
TEST(Renderer, KeysBecomeControlCommands) {
  auto r = MakeRenderer({{0, 0, 0, 160, 100}}, 160, 100);
  if (!r) GTEST_SKIP() << "no display (run under xvfb-run)";
  Renderer::PollEvents();  // whatever the window system queued
  for (SDL_Keycode key : {SDLK_SPACE, SDLK_LEFT, SDLK_RIGHT, SDLK_HOME, SDLK_o}) {
    SDL_Event e{};
    e.type = SDL_KEYDOWN;
    e.key.keysym.sym = key;
    SDL_PushEvent(&e);
  }
  const Renderer::Events ev = Renderer::PollEvents();
  EXPECT_EQ(ev.commands, (std::vector<std::string>{"toggle", "step -1", "step +1", "seek 0"}));
  EXPECT_TRUE(ev.toggle_overlay);
  EXPECT_FALSE(ev.quit);
  SDL_Event q{};
  q.type = SDL_KEYDOWN;
  q.key.keysym.sym = SDLK_q;
  SDL_PushEvent(&q);
  EXPECT_TRUE(Renderer::PollEvents().quit);
}

TEST(SpanLayout, PlacesANodesTilesByTheirWallPosition) {
  WallSettings wall = Wall();
  wall.layout = {5, 3};
  int w = 0, h = 0;
  const auto v = SpanLayout(wall, {7, 6}, &w, &h);  // r1c2 and r1c1
  EXPECT_EQ(w, 320);
  EXPECT_EQ(h, 100);
  EXPECT_EQ(v[0].x, 160);  // r1c2 right of r1c1
  EXPECT_EQ(v[1].x, 0);
  EXPECT_EQ(v[0].y, 0);
}

}  // namespace
}  // namespace tilestream
