#include "tools/wallcut/wall_cutter.h"

#include <gtest/gtest.h>

#include <vector>

namespace tilestream {
namespace {

// Every source pixel encodes its own (x, y).
std::vector<std::byte> CoordinateFrame(uint32_t w, uint32_t h) {
  std::vector<std::byte> f(size_t{w} * h * 3);
  for (uint32_t y = 0; y < h; ++y)
    for (uint32_t x = 0; x < w; ++x) {
      std::byte* p = &f[(size_t{y} * w + x) * 3];
      p[0] = std::byte(x & 0xff);
      p[1] = std::byte(y & 0xff);
      p[2] = std::byte(((x >> 8) << 4) | (y >> 8));
    }
  return f;
}

void ExpectTilesCutAt(const WallSettings& wall) {
  const auto source = CoordinateFrame(wall.source_width(), wall.source_height());
  std::vector<std::byte> tile(wall.tile.frame_bytes());
  for (uint32_t t = 0; t < wall.layout.tile_count(); ++t) {
    CutTile(wall, source, t, tile);
    const PixelOrigin o = TileOrigin(wall, t);
    const TileId id = TileId::FromIndex(t, wall.layout);
    EXPECT_EQ(o.x, id.column * (wall.tile.width + wall.bezel_x));
    EXPECT_EQ(o.y, id.row * (wall.tile.height + wall.bezel_y));
    for (uint32_t y = 0; y < wall.tile.height; ++y)
      for (uint32_t x = 0; x < wall.tile.width; ++x)
        for (int c = 0; c < 3; ++c)
          ASSERT_EQ(tile[(size_t{y} * wall.tile.width + x) * 3 + c],
                    source[(size_t{o.y + y} * wall.source_width() + o.x + x) * 3 + c])
              << "tile " << t << " at " << x << "," << y;
  }
}

TEST(WallCutter, SourceFrameSpansTilesAndBezels) {
  WallSettings wall;
  wall.layout = {5, 3};
  wall.tile = {2560, 1600};
  wall.bezel_x = 144;
  wall.bezel_y = 100;
  EXPECT_EQ(wall.source_width(), 5u * 2560 + 4 * 144);
  EXPECT_EQ(wall.source_height(), 3u * 1600 + 2 * 100);
}

TEST(WallCutter, CutsEveryTileWithoutBezels) {
  WallSettings wall;
  wall.layout = {3, 2};
  wall.tile = {37, 11};
  ExpectTilesCutAt(wall);
}

TEST(WallCutter, DropsThePixelsBehindTheBezels) {
  WallSettings wall;
  wall.layout = {3, 2};
  wall.tile = {37, 11};
  wall.bezel_x = 5;
  wall.bezel_y = 3;
  ExpectTilesCutAt(wall);
  // The first pixel of tile r1c1 is source pixel (37 + 5, 11 + 3).
  const auto source = CoordinateFrame(wall.source_width(), wall.source_height());
  std::vector<std::byte> tile(wall.tile.frame_bytes());
  CutTile(wall, source, 4, tile);
  EXPECT_EQ(tile[0], std::byte{42});
  EXPECT_EQ(tile[1], std::byte{14});
}

}  // namespace
}  // namespace tilestream
