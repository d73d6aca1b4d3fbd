#include "streamer/thumbnail_board.h"

#include <gtest/gtest.h>

#include <cstring>

namespace tilestream {
namespace {

WallSettings Wall2x2() {
  WallSettings w;
  w.layout = {2, 2};
  w.tile = {320, 200};  // thumbnails of 160x100, factor 2
  w.bezel_x = 20;       // 10 thumbnail pixels
  w.bezel_y = 8;        // 4
  return w;
}

std::vector<std::byte> Message(uint32_t tile, uint32_t w, uint32_t h, std::byte value) {
  ThumbnailHeader header{tile, w, h, 0, 7};
  std::vector<std::byte> m(sizeof header + size_t{w} * h * 3, value);
  std::memcpy(m.data(), &header, sizeof header);
  return m;
}

std::byte At(const Image& image, uint32_t x, uint32_t y) {
  return image.rgb[(size_t{y} * image.width + x) * 3];
}

TEST(ThumbnailBoard, TheWallHasEveryTileAtItsPlaceWithTheBezelsBetween) {
  ThumbnailBoard board(Wall2x2());
  ASSERT_TRUE(board.Accept(Message(1, 160, 100, std::byte{200})));  // r0c1
  ASSERT_TRUE(board.Accept(Message(2, 160, 100, std::byte{100})));  // r1c0
  const Image wall = board.Wall();
  EXPECT_EQ(wall.width, 160u * 2 + 10);
  EXPECT_EQ(wall.height, 100u * 2 + 4);
  EXPECT_EQ(At(wall, 0, 0), std::byte{0}) << "r0c0: none yet, black";
  EXPECT_EQ(At(wall, 165, 50), std::byte{0x30}) << "the bezel";
  EXPECT_EQ(At(wall, 170, 0), std::byte{200}) << "r0c1's first pixel";
  EXPECT_EQ(At(wall, 329, 99), std::byte{200});
  EXPECT_EQ(At(wall, 0, 104), std::byte{100}) << "r1c0's first pixel";
  EXPECT_EQ(At(wall, 100, 102), std::byte{0x30});
}

TEST(ThumbnailBoard, MessagesOfAnotherTileOrSizeAreIgnored) {
  ThumbnailBoard board(Wall2x2());
  EXPECT_FALSE(board.Accept(Message(4, 160, 100, std::byte{1})));  // no tile 4
  EXPECT_FALSE(board.Accept(Message(0, 161, 100, std::byte{1})));  // wrong size
  EXPECT_FALSE(board.Accept(std::vector<std::byte>(10)));          // no header
  auto cut = Message(0, 160, 100, std::byte{1});
  cut.pop_back();
  EXPECT_FALSE(board.Accept(cut));
  EXPECT_EQ(board.Tile("r0c0")->width, 0u) << "nothing kept";
}

TEST(ThumbnailBoard, ATileByItsName) {
  ThumbnailBoard board(Wall2x2());
  ASSERT_TRUE(board.Accept(Message(3, 160, 100, std::byte{9})));
  const auto tile = board.Tile("r1c1");
  ASSERT_TRUE(tile.has_value());
  EXPECT_EQ(tile->width, 160u);
  EXPECT_EQ(tile->rgb.size(), 160u * 100 * 3);
  EXPECT_EQ(tile->rgb[0], std::byte{9});
  EXPECT_FALSE(board.Tile("r2c0").has_value());
  EXPECT_FALSE(board.Tile("../etc").has_value());
}

}  // namespace
}  // namespace tilestream
