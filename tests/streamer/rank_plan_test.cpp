#include "streamer/rank_plan.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/support/built_paths.h"

namespace tilestream {
namespace {

// A 5x3 wall over 4 NICs on 2 NUMA nodes; tile t leaves by NIC
// (t * 7) % 4, so NICs and tiles interleave.
WallConfig FourNics() {
  WallConfig c = DefaultWallConfig({5, 3});
  c.nics = {{"eth2", "", 0, 10, "", 0},
            {"eth3", "", 1, 10, "", 0},
            {"eth4", "", 0, 10, "", 0},
            {"eth5", "", 1, 10, "", 0}};
  for (uint32_t t = 0; t < c.tile_count(); ++t) c.routes[t].nic = (t * 7) % 4;
  return c;
}

void ExpectEveryTileOnceAndBalanced(const RankPlan& plan, uint32_t tiles) {
  std::set<uint32_t> seen;
  size_t least = tiles, most = 0;
  for (int r = 1; r <= plan.tile_ranks(); ++r) {
    least = std::min(least, plan.tiles(r).size());
    most = std::max(most, plan.tiles(r).size());
    for (uint32_t t : plan.tiles(r)) {
      EXPECT_TRUE(seen.insert(t).second) << "tile " << t << " on two ranks";
      EXPECT_EQ(plan.rank(t), r);
    }
  }
  EXPECT_EQ(seen.size(), tiles);
  EXPECT_GE(least, 1u);
  EXPECT_LE(most - least, 1u) << "tiles per rank differ by one at most";
}

TEST(RankPlan, OneRankPerTileKeepsRankTPlusOneForTileT) {
  const RankPlan plan(FourNics(), 15);
  for (uint32_t t = 0; t < 15; ++t) {
    ASSERT_EQ(plan.tiles(static_cast<int>(t + 1)), std::vector<uint32_t>{t});
    EXPECT_EQ(plan.rank(t), static_cast<int>(t + 1));
  }
}

TEST(RankPlan, EveryWorldSizeServesEveryTileOnceAsEvenlyAsPossible) {
  const WallConfig c = FourNics();
  for (uint32_t ranks = 1; ranks <= 15; ++ranks) {
    SCOPED_TRACE(ranks);
    ExpectEveryTileOnceAndBalanced(RankPlan(c, ranks), 15);
  }
}

TEST(RankPlan, ARanksTilesShareANicWhereTheCountsAllowIt) {
  const WallConfig c = FourNics();
  // 4 NICs with 4, 4, 4 and 3 tiles, on 4 ranks of 4, 4, 4 and 3 tiles.
  const RankPlan plan(c, 4);
  for (int r = 1; r <= 4; ++r) {
    std::set<uint32_t> nics;
    for (uint32_t t : plan.tiles(r)) nics.insert(c.routes[t].nic);
    EXPECT_EQ(nics.size(), 1u) << "rank " << r;
  }
  // 2 ranks: one per NUMA node (8 tiles on node 0's NICs, 7 on node 1's).
  const RankPlan halves(c, 2);
  for (int r = 1; r <= 2; ++r) {
    std::set<int> numa;
    for (uint32_t t : halves.tiles(r)) numa.insert(c.nics[c.routes[t].nic].numa_node);
    EXPECT_EQ(numa.size(), 1u) << "rank " << r;
  }
  EXPECT_EQ(halves.tiles(1).size(), 8u);
}

// The reference wall's config: 5 ranks (-n 5) get one NIC's tiles each.
TEST(RankPlan, TheReferenceWallOnFourTileRanksGivesEachRankOneNic) {
  auto c = LoadWallConfig(TILESTREAM_SOURCE_DIR + "/configs/sara-5x3.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const RankPlan plan(*c, 4);
  ExpectEveryTileOnceAndBalanced(plan, 15);
  for (int r = 1; r <= 4; ++r) {
    std::set<uint32_t> nics;
    for (uint32_t t : plan.tiles(r)) nics.insert(c->routes[t].nic);
    EXPECT_EQ(nics.size(), 1u) << "rank " << r;
  }
}

TEST(RankPlan, RanksPastTilesPlusOneAreSpare) {
  const RankPlan plan(DefaultWallConfig({2, 2}), 6);
  EXPECT_EQ(plan.tile_ranks(), 4);
  ExpectEveryTileOnceAndBalanced(plan, 4);
  EXPECT_TRUE(plan.tiles(5).empty());
  EXPECT_TRUE(plan.tiles(6).empty());
}

TEST(RankPlan, OneRankStreamsTheWholeWall) {
  const RankPlan plan(DefaultWallConfig({2, 2}), 1);
  EXPECT_EQ(plan.tiles(1), (std::vector<uint32_t>{0, 1, 2, 3}));
}

}  // namespace
}  // namespace tilestream
