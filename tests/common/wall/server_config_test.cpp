// Walls over several streaming servers ([[server]], docs/config.md): tiles
// balanced over every server's NICs or given to a server, and one test per
// rule that keeps such a config from reaching mpirun broken.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "common/wall/wall_config.h"
#include "tests/support/two_servers.h"

namespace tilestream {
namespace {

using ::testing::HasSubstr;

using testing::kTwoServersToml;

using Edits = std::vector<std::pair<std::string, std::string>>;

// kTwoServersToml with each edit's first text replaced by its second.
std::string With(const Edits& edits) {
  std::string s = kTwoServersToml;
  for (const auto& [from, to] : edits) {
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) s.replace(at, from.size(), to);
  }
  return s;
}

// Texts of kTwoServersToml that edits replace.
const std::string kServer1 = "name = \"stream1\"", kServer2Store = "store = \"/data/two\"";
const std::string kNic2 = "server = \"stream2\"\nname = \"eth2\"";
const std::string kNic3 = "server = \"stream2\"\nname = \"eth3\"";
const std::string kNetwork = "network = \"10.99.0.0/24\"";
const std::string kRow0 = "tiles = [\"r0c0\"", kRow1 = "tiles = [\"r1c0\"";
const std::string kAllTiles =
    "tiles = [\"r0c0\", \"r0c1\", \"r0c2\", \"r0c3\", \"r1c0\", \"r1c1\", \"r1c2\", \"r1c3\"]";

WallConfig Parse(const std::string& toml) {
  auto c = ParseWallConfig(toml, "wall.toml");
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : WallConfig{};
}

std::vector<uint32_t> TilesPerServer(const WallConfig& c) {
  std::vector<uint32_t> n(c.servers.size());
  for (const TileRoute& r : c.routes) ++n[r.server];
  return n;
}

TEST(ServerConfig, BalancesTilesOverEveryServersNics) {
  const WallConfig c = Parse(kTwoServersToml);
  ASSERT_EQ(c.servers.size(), 2u);
  EXPECT_TRUE(c.several_servers());
  EXPECT_EQ(c.servers[1].store, "/data/two");
  EXPECT_EQ(TilesPerServer(c), (std::vector<uint32_t>{4, 4}));
  std::vector<uint32_t> per_nic(4);
  for (const TileRoute& r : c.routes) {
    EXPECT_EQ(r.server, c.nics[r.nic].server);
    ++per_nic[r.nic];
  }
  EXPECT_EQ(per_nic, (std::vector<uint32_t>{2, 2, 2, 2}));
}

TEST(ServerConfig, ATileListGivesTilesToAServerAndTheRestGoToTheOthers) {
  const WallConfig c = Parse(With({{kServer2Store, "tiles = [\"r0c0\", \"r0c1\", \"r1c0\"]"}}));
  EXPECT_EQ(TilesPerServer(c), (std::vector<uint32_t>{5, 3}));
  for (const char* name : {"r0c0", "r0c1", "r1c0"})
    EXPECT_EQ(c.routes[ParseTileName(name, c.wall.layout)->Index(c.wall.layout)].server, 1u);
}

TEST(ServerConfig, ANodesQualifiedNicPinsItsTilesToThatServer) {
  const WallConfig c =
      Parse(With({{"tiles = [\"r0c0\"", "nic = \"stream2/eth3\"\ntiles = [\"r0c0\""}}));
  std::vector<uint32_t> per_nic(4);
  for (uint32_t t = 0; t < 8; ++t) ++per_nic[c.routes[t].nic];
  for (uint32_t t = 0; t < 4; ++t) {
    EXPECT_EQ(c.routes[t].nic, 3u);
    EXPECT_EQ(c.routes[t].server, 1u);
  }
  // The rest balance against it, by NIC: the other three NICs share them.
  EXPECT_EQ(per_nic, (std::vector<uint32_t>{2, 1, 1, 4}));
}

TEST(ServerConfig, ANicNameOnOneServerOnlyNeedsNoServerInAPin) {
  const WallConfig c = Parse(With(
      {{"name = \"eth3\"\naddress = \"10.10.4.1\"", "name = \"eth9\"\naddress = \"10.10.4.1\""},
       {"tiles = [\"r1c0\"", "nic = \"eth9\"\ntiles = [\"r1c0\""}}));
  for (uint32_t t = 4; t < 8; ++t) EXPECT_EQ(c.routes[t].nic, 3u);
}

TEST(ServerConfig, AConfigWithoutServersHasOneUnnamedServer) {
  auto c = ParseWallConfig("[wall]\ncolumns = 2\nrows = 1\n", "wall.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->servers.size(), 1u);
  EXPECT_EQ(c->servers[0].name, "");
  EXPECT_FALSE(c->several_servers());
  for (const TileRoute& r : c->routes) EXPECT_EQ(r.server, 0u);
}

TEST(ServerConfig, ReadsTheManagementNetwork) {
  EXPECT_EQ(Parse(kTwoServersToml).mpi.network, "10.99.0.0/24");
}

// One broken config per rule: its edits of kTwoServersToml and what the
// message must say.
struct Rule {
  const char* name;
  Edits edits;
  std::string expect;
};

// Names the rule in test lists, not its bytes.
void PrintTo(const Rule& rule, std::ostream* out) { *out << rule.name; }

class ServerRule : public ::testing::TestWithParam<Rule> {};

TEST_P(ServerRule, IsRefusedWithTheKeyAndTheProblem) {
  const Rule& rule = GetParam();
  auto c = ParseWallConfig(With(rule.edits), "wall.toml");
  ASSERT_FALSE(c.ok()) << "accepted";
  EXPECT_THAT(c.status().message(), HasSubstr("wall.toml:"));
  EXPECT_THAT(c.status().message(), HasSubstr(rule.expect));
}

INSTANTIATE_TEST_SUITE_P(
    ServerConfig, ServerRule,
    ::testing::Values(
        Rule{"ServerListedTwice",
             {{"name = \"stream2\"", kServer1}},
             "server[1].name: server 'stream1' is listed twice"},
        Rule{"ServerNameNotAHostName",
             {{"name = \"stream2\"", "name = \"stream 2\""}},
             "server[1].name: 'stream 2' is not a host name"},
        Rule{"StoreNotAbsolute",
             {{kServer2Store, "store = \"data/two\""}},
             "server[1].store: 'data/two' is not an absolute path"},
        Rule{"NicOnNoServer",
             {{kNic2, "name = \"eth2\""}},
             "nic[2].server: the wall has 2 servers: say which one NIC 'eth2' is on"},
        Rule{"NicOnUnknownServer",
             {{kNic2, "server = \"stream3\"\nname = \"eth2\""}},
             "nic[2].server: unknown server 'stream3' (the [[server]] entries are: stream1, "
             "stream2)"},
        Rule{"NicOnTwoServers",
             {{"address = \"10.10.3.1\"", "address = \"10.10.1.1\""}},
             "nic[2].address: 10.10.1.1 is also the address of NIC 'eth2' on server 'stream1'"},
        Rule{"NicTwiceOnAServer",
             {{kNic3, kNic2}},
             "nic[3].name: NIC 'eth2' is listed twice on server 'stream2'"},
        Rule{"ServerWithoutNic",
             {{kNic2, "server = \"stream1\"\nname = \"eth4\""},
              {kNic3, "server = \"stream1\"\nname = \"eth5\""}},
             "server[1]: server 'stream2' has no NIC"},
        Rule{"AmbiguousNicPin",
             {{kRow1, "nic = \"eth2\"\n" + kRow1}},
             "node[1].nic: NIC 'eth2' is on 2 servers: write 'stream1/eth2' or 'stream2/eth2'"},
        Rule{"UnknownQualifiedNic",
             {{kRow1, "nic = \"stream3/eth2\"\n" + kRow1}},
             "node[1].nic: unknown NIC 'stream3/eth2' (the [[nic]] entries are: stream1/eth2, "
             "stream1/eth3, stream2/eth2, stream2/eth3)"},
        Rule{"TileOnTwoServers",
             {{kServer1, kServer1 + "\ntiles = [\"r0c1\"]"}, {kServer2Store, "tiles = [\"r0c1\"]"}},
             "server[1].tiles: tile r0c1 is also on server 'stream1'"},
        Rule{"TileOnNoServer",
             {{kServer1, kServer1 + "\ntiles = [\"r0c1\"]"}, {kServer2Store, "tiles = [\"r0c0\"]"}},
             "server: tile r0c2 is on no server (every [[server]] lists its tiles)"},
        Rule{"TileOutsideTheLayout",
             {{kServer2Store, "tiles = [\"r5c0\"]"}},
             "server[1].tiles: tile r5c0 is outside the 4x2 layout"},
        Rule{"ServerTileOnAnotherServersNic",
             {{kRow0, "nic = \"stream1/eth2\"\n" + kRow0}, {kServer2Store, "tiles = [\"r0c0\"]"}},
             "server[1].tiles: tile r0c0 is on display node 'top', whose NIC 'eth2' is on server "
             "'stream1'"},
        Rule{"ServerWithNoTile",
             {{kServer1, kServer1 + "\n" + kAllTiles}},
             "server[1]: server 'stream2' streams no tile"},
        Rule{"MpiNetworkNotASubnet",
             {{kNetwork, "network = \"10.99.0.0\""}},
             "mpi.network: '10.99.0.0' is not an IPv4 subnet like \"10.99.0.0/24\""},
        Rule{"MpiNetworkOnAMediaNic",
             {{kNetwork, "network = \"10.10.0.0/16\""}},
             "mpi.network: NIC 'eth2' (10.10.1.1) is inside 10.10.0.0/16"}),
    [](const ::testing::TestParamInfo<Rule>& info) { return info.param.name; });

}  // namespace
}  // namespace tilestream
