#include "common/wall/layout.h"

#include <gtest/gtest.h>

namespace tilestream {
namespace {

TEST(Layout, ParsesColumnsByRows) {
  auto l = ParseLayout("5x3");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->columns, 5u);
  EXPECT_EQ(l->rows, 3u);
  EXPECT_EQ(l->tile_count(), 15u);
  EXPECT_EQ(l->ToString(), "5x3");
}

TEST(Layout, RejectsMalformedOrEmptyLayouts) {
  for (const char* bad :
       {"", "5", "5x", "x3", "0x3", "5x0", "5x3x2", "-1x3", "65x1", "5 x 3", "ax3"})
    EXPECT_FALSE(ParseLayout(bad).ok()) << bad;
}

TEST(Layout, TileNamesAndIndicesRoundTrip) {
  const Layout l{5, 3};
  for (uint32_t i = 0; i < l.tile_count(); ++i) {
    const TileId id = TileId::FromIndex(i, l);
    auto parsed = ParseTileName(id.Name(), l);
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(parsed->Index(l), i);
  }
  EXPECT_EQ(TileId::FromIndex(7, l).Name(), "r1c2");
}

TEST(Layout, RejectsTileNamesOutsideLayout) {
  const Layout l{5, 3};
  EXPECT_FALSE(ParseTileName("r3c0", l).ok());
  EXPECT_FALSE(ParseTileName("r0c5", l).ok());
  EXPECT_FALSE(ParseTileName("c0r0", l).ok());
  EXPECT_FALSE(ParseTileName("r0c", l).ok());
}

TEST(Layout, ParsesSizesWithinBounds) {
  auto s = ParseSize("2560x1600", "tile", 1, 32767);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->width, 2560u);
  EXPECT_EQ(s->height, 1600u);
  EXPECT_FALSE(ParseSize("2560x40000", "tile", 1, 32767).ok());
  EXPECT_EQ(ParseSize("wide", "tile", 1, 32767).status().message(),
            "tile 'wide' is not of the form WxH");
}

}  // namespace
}  // namespace tilestream
