// Where tiles go while NICs are down (common/wall/nic_failover.h).
#include "common/wall/nic_failover.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilestream {
namespace {

// The testbed's 2x2 wall with `nics` NICs of 10 Gbit/s, balanced.
WallConfig Wall(const std::string& nics) {
  auto c = ParseWallConfig(
      "[wall]\ncolumns = 4\nrows = 2\ntile_width = 2560\ntile_height = 1600\nfps = 10\n" + nics +
          "[[node]]\nname = \"a\"\naddress = \"10.0.0.11\"\n"
          "tiles = [\"r0c0\", \"r0c1\", \"r0c2\", \"r0c3\", \"r1c0\", \"r1c1\", \"r1c2\", "
          "\"r1c3\"]\n",
      "test.toml");
  EXPECT_TRUE(c.ok()) << c.status().message();
  return *c;
}

const char* kFourNics =
    "[[nic]]\nname = \"eth2\"\naddress = \"10.1.0.1\"\n[[nic]]\nname = \"eth3\"\naddress = "
    "\"10.2.0.1\"\n[[nic]]\nname = \"eth4\"\naddress = \"10.3.0.1\"\n[[nic]]\nname = "
    "\"eth5\"\naddress = \"10.4.0.1\"\n";

std::map<uint32_t, int> TilesPerNic(const std::vector<uint32_t>& nics) {
  std::map<uint32_t, int> per;
  for (uint32_t n : nics) ++per[n];
  return per;
}

TEST(NicFailover, WithEveryNicUpEveryTileIsWhereTheConfigPutIt) {
  const WallConfig c = Wall(kFourNics);
  const auto nics = FailoverNics(c, {true, true, true, true});
  for (uint32_t t = 0; t < c.tile_count(); ++t) EXPECT_EQ(nics[t], c.routes[t].nic) << t;
}

TEST(NicFailover, TheTilesOfANicThatIsDownAreSpreadOverTheOthersAndNoOtherTileMoves) {
  const WallConfig c = Wall(kFourNics);
  const auto nics = FailoverNics(c, {false, true, true, true});
  for (uint32_t t = 0; t < c.tile_count(); ++t) {
    EXPECT_NE(nics[t], 0u) << t;
    if (c.routes[t].nic == 0) continue;
    EXPECT_EQ(nics[t], c.routes[t].nic) << t << " stays";
  }
  const auto per = TilesPerNic(nics);  // 8 tiles: 2 each, then eth2's 2 on two others
  for (const auto& [nic, tiles] : per) EXPECT_LE(tiles, 3) << nic;
}

TEST(NicFailover, WithNoNicUpATileStaysWhereItIs) {
  const WallConfig c = Wall(kFourNics);
  const auto nics = FailoverNics(c, {false, false, false, false});
  for (uint32_t t = 0; t < c.tile_count(); ++t) EXPECT_EQ(nics[t], c.routes[t].nic) << t;
}

TEST(NicFailover, ATileMovesOnlyToANicOfItsOwnServer) {
  const WallConfig c = Wall(
      "[[server]]\nname = \"s1\"\nstore = \"/a\"\n[[server]]\nname = \"s2\"\nstore = \"/b\"\n"
      "[[nic]]\nname = \"eth2\"\naddress = \"10.1.0.1\"\nserver = \"s1\"\n"
      "[[nic]]\nname = \"eth3\"\naddress = \"10.2.0.1\"\nserver = \"s1\"\n"
      "[[nic]]\nname = \"eth2\"\naddress = \"10.3.0.1\"\nserver = \"s2\"\n"
      "[[nic]]\nname = \"eth3\"\naddress = \"10.4.0.1\"\nserver = \"s2\"\n");
  const auto nics = FailoverNics(c, {false, true, true, true});
  for (uint32_t t = 0; t < c.tile_count(); ++t)
    EXPECT_EQ(c.nics[nics[t]].server, c.nics[c.routes[t].nic].server) << t;
  const auto s1_down = FailoverNics(c, {false, false, true, true});
  for (uint32_t t = 0; t < c.tile_count(); ++t) {
    if (c.nics[c.routes[t].nic].server != 0) continue;
    EXPECT_EQ(s1_down[t], c.routes[t].nic) << t << ": no NIC of its server is up";
  }
}

std::vector<double> Capacities(const WallConfig& c) {
  return NicCapacities(c, 0, [](const std::string&) { return std::nullopt; });
}

TEST(NicFailover, TheShareCarriedIsTheMostLoadedNicsSpeedOverItsLoad) {
  const WallConfig c = Wall(kFourNics);  // 8 tiles of 0.98 Gbit/s
  const std::vector<double> ten(4, 10e9);
  EXPECT_DOUBLE_EQ(CarriedShare(c, std::vector<uint32_t>(8, 0), ten), 1.0) << "7.9 Gbit/s on one";
  const WallConfig fast = Wall(
      "[[nic]]\nname = \"eth2\"\naddress = \"10.1.0.1\"\nspeed_gbps = 4\n"
      "[[nic]]\nname = \"eth3\"\naddress = \"10.2.0.1\"\nspeed_gbps = 4\n");
  const double tile = fast.wall.tile_bits_per_second();
  EXPECT_DOUBLE_EQ(CarriedShare(fast, {0, 0, 0, 0, 1, 1, 1, 1}, Capacities(fast)), 1.0);
  EXPECT_NEAR(CarriedShare(fast, std::vector<uint32_t>(8, 1), Capacities(fast)), 4e9 / (8 * tile),
              1e-9);
}

TEST(NicFailover, ANicsCapacityIsItsConfiguredSpeedElseTheKernelsOfItsOwnServer) {
  const WallConfig c = Wall(
      "[[nic]]\nname = \"eth2\"\naddress = \"10.1.0.1\"\nspeed_gbps = 4\n"
      "[[nic]]\nname = \"eth3\"\naddress = \"10.2.0.1\"\n"
      "[[nic]]\nname = \"eth4\"\naddress = \"10.3.0.1\"\n");
  std::vector<std::string> asked;
  const auto kernel = [&](const std::string& name) -> std::optional<double> {
    asked.push_back(name);
    if (name == "eth3") return 25e9;
    return std::nullopt;  // eth4: a virtio NIC that reports none
  };
  EXPECT_EQ(NicCapacities(c, 0, kernel), (std::vector<double>{4e9, 25e9, 0}));
  EXPECT_EQ(asked, (std::vector<std::string>{"eth3", "eth4"})) << "speed_gbps overrides";
  asked.clear();
  EXPECT_EQ(NicCapacities(c, 1, kernel), (std::vector<double>{4e9, 0, 0}))
      << "another server's kernel is not this one's";
  EXPECT_TRUE(asked.empty());
}

TEST(NicFailover, AWallWithoutNicsHasNoCeilingWhateverItsRate) {
  // The reference wall, 5x3 of 2560x1600 at 60 fps (88 Gbit/s), over the
  // "default" NIC: no interface, no speed, no cut.
  auto c = ParseWallConfig(
      "[wall]\ncolumns = 5\nrows = 3\ntile_width = 2560\ntile_height = 1600\nfps = 60\n",
      "test.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->nics.size(), 1u);
  EXPECT_EQ(c->nics[0].speed_gbps, 0);
  bool asked = false;
  const auto capacity = NicCapacities(*c, 0, [&](const std::string&) {
    asked = true;
    return std::optional<double>(1e9);
  });
  EXPECT_FALSE(asked) << "'default' is no interface";
  EXPECT_DOUBLE_EQ(FailoverCeiling(*c, std::vector<uint32_t>(15, 0), capacity), 1.0);
}

TEST(NicFailover, TheCeilingOnlyCutsBelowWhatTheNicsCarriedBeforeAFailover) {
  // Two NICs said to carry 2 Gbit/s each, 4 tiles of 0.98 Gbit/s on each:
  // too slow on paper, yet with both up nothing is cut.
  const WallConfig c = Wall(
      "[[nic]]\nname = \"eth2\"\naddress = \"10.1.0.1\"\nspeed_gbps = 2\n"
      "[[nic]]\nname = \"eth3\"\naddress = \"10.2.0.1\"\nspeed_gbps = 2\n");
  std::vector<uint32_t> routes(c.tile_count());
  for (uint32_t t = 0; t < c.tile_count(); ++t) routes[t] = c.routes[t].nic;
  const auto capacity = Capacities(c);
  EXPECT_DOUBLE_EQ(FailoverCeiling(c, routes, capacity), 1.0);
  // One down: the other carries all 8, half of what both carried.
  EXPECT_NEAR(FailoverCeiling(c, std::vector<uint32_t>(8, 1), capacity), 0.5, 1e-9);
  // Unknown capacities never cut.
  EXPECT_DOUBLE_EQ(FailoverCeiling(c, std::vector<uint32_t>(8, 1), {0, 0}), 1.0);
}

}  // namespace
}  // namespace tilestream
