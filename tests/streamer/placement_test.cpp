#include "streamer/placement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/two_servers.h"

namespace tilestream {
namespace {

using ::testing::HasSubstr;
using testing::TwoServers;

// Ranks 1..n in order fill the first server's slots, then the second's.
TEST(Placement, RanksFollowTheServersInHostfileOrder) {
  const WallConfig c = TwoServers();
  const RankPlan plan(c, c.tile_count());
  for (int rank = 1; rank <= 8; ++rank) {
    ASSERT_EQ(plan.tiles(rank).size(), 1u);
    EXPECT_EQ(c.routes[plan.tiles(rank)[0]].server, rank <= 4 ? 0u : 1u) << "rank " << rank;
  }
  EXPECT_THAT(Hostfile(c), HasSubstr("\nstream1 slots=5\nstream2 slots=4\n"));
  EXPECT_EQ(RanksOfWall(c), 9);
}

TEST(Placement, EveryRankOnItsServerPasses) {
  const WallConfig c = TwoServers();
  const RankPlan plan(c, c.tile_count());
  EXPECT_TRUE(CheckPlacement(c, plan, 0, "stream1").ok());
  for (int rank = 1; rank <= 8; ++rank)
    EXPECT_TRUE(CheckPlacement(c, plan, rank, rank <= 4 ? "stream1" : "stream2.lab").ok());
}

TEST(Placement, ARankOnAnotherHostIsRefusedNamingTheTileAndBothHosts) {
  const WallConfig c = TwoServers();
  const RankPlan plan(c, c.tile_count());
  const uint32_t tile = plan.tiles(8)[0];
  const Status s = CheckPlacement(c, plan, 8, "stream1");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("tile " + TileId::FromIndex(tile, c.wall.layout).Name() +
                                     " runs on host 'stream1', but its server is 'stream2'"));
  EXPECT_THAT(CheckPlacement(c, plan, 0, "stream2").message(),
              HasSubstr("the coordinator (rank 0) runs on host 'stream2', but belongs on the "
                        "first server, 'stream1'"));
}

TEST(Placement, ASingleServerWallRunsAnywhereOnAnyWorldSize) {
  const WallConfig c = DefaultWallConfig({2, 2});
  const RankPlan plan(c, 2);
  EXPECT_TRUE(CheckPlacement(c, plan, 1, "laptop").ok());
  EXPECT_TRUE(CheckWorldSize(c, 1).ok());
  EXPECT_TRUE(CheckWorldSize(c, 3).ok());
  EXPECT_TRUE(MpirunOptions(c).empty());
}

TEST(Placement, SeveralServersNeedOneRankPerTile) {
  const WallConfig c = TwoServers();
  EXPECT_TRUE(CheckWorldSize(c, 9).ok());
  EXPECT_THAT(CheckWorldSize(c, 1).message(),
              HasSubstr("runs on 2 servers: it needs 9 ranks (one per tile and the coordinator)"));
  EXPECT_FALSE(CheckWorldSize(c, 5).ok());
}

TEST(Placement, MpiStaysOnTheManagementNetwork) {
  EXPECT_EQ(MpirunOptions(TwoServers()),
            (std::vector<std::string>{"--mca", "btl_tcp_if_include", "10.99.0.0/24", "--mca",
                                      "oob_tcp_if_include", "10.99.0.0/24"}));
}

}  // namespace
}  // namespace tilestream
