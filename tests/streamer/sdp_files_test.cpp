#include "streamer/sdp_files.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/support/temp_dir.h"

namespace tilestream {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(SdpFiles, WritesAFilePerTileThatReadsBackAsThatTilesStream) {
  testing::TempDir dir;
  const WallConfig c = DefaultWallConfig({2, 1});
  ASSERT_TRUE(WriteSdpFiles(c, dir / "sdp").ok());
  for (uint32_t t = 0; t < 2; ++t) {
    const std::string name = TileId::FromIndex(t, c.wall.layout).Name();
    auto d = ParseSdp(Slurp(dir / ("sdp/tile_" + name + ".sdp")));
    ASSERT_TRUE(d.ok()) << d.status().message();
    EXPECT_EQ(d->port, c.routes[t].port);
    EXPECT_EQ(d->ssrc, TileSsrc(t));
    EXPECT_EQ(d->payload_type, c.stream.payload_type);
    EXPECT_EQ(d->tile.width, c.wall.tile.width);
    EXPECT_EQ(d->tile.height, c.wall.tile.height);
  }
}

TEST(SdpFiles, RetransmissionIsDescribedWhereTheTileHasIt) {
  WallConfig c = DefaultWallConfig({2, 1});
  c.routes[1].retransmission = false;
  const TileStreamDescription on = DescribeTileStream(c, 0);
  const TileStreamDescription off = DescribeTileStream(c, 1);
  EXPECT_EQ(on.rtx_payload_type, c.stream.rtx_payload_type);
  EXPECT_EQ(on.rtx_ssrc, TileRtxSsrc(0));
  EXPECT_EQ(on.rtx_time_ms, static_cast<uint32_t>(2000 / c.wall.fps));
  EXPECT_EQ(off.rtx_payload_type, 0);
}

TEST(SdpFiles, AnUnwritableDirectoryIsAnErrorNamingTheFile) {
  testing::TempDir dir;
  std::ofstream(dir / "file") << "not a directory";
  const Status s = WriteSdpFiles(DefaultWallConfig({2, 1}), dir / "file");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("tile_r0c0.sdp"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace tilestream
