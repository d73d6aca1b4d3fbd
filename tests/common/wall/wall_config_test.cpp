#include "common/wall/wall_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "common/control/http_listener.h"
#include "tests/support/built_paths.h"

namespace tilestream {
namespace {

using ::testing::HasSubstr;

const std::string kConfigs = TILESTREAM_SOURCE_DIR + "/configs/";

// A valid 2x1 wall to which each test adds one mistake.
constexpr const char* kTwoTiles = R"(
[wall]
columns = 2
rows = 1
tile_width = 64
tile_height = 32

[[nic]]
name = "eth0"
address = "192.0.2.1"

[[node]]
name = "a"
address = "127.0.0.1"
tiles = ["r0c0"]

[[node]]
name = "b"
address = "127.0.0.2"
tiles = ["r0c1"]
)";

std::string Error(const std::string& toml) {
  auto c = ParseWallConfig(toml, "wall.toml");
  EXPECT_FALSE(c.ok()) << "accepted:\n" << toml;
  return c.ok() ? "" : c.status().message();
}

std::string With(const std::string& from, const std::string& to) {
  std::string s = kTwoTiles;
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

TEST(WallConfig, LoadsTheReferenceWall) {
  auto c = LoadWallConfig(kConfigs + "sara-5x3.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->wall.layout, (Layout{5, 3}));
  EXPECT_EQ(c->wall.tile, (TileGeometry{2560, 1600}));
  EXPECT_EQ(c->stream.mtu, 9000u);
  EXPECT_EQ(c->max_udp_payload(), 8960u);
  EXPECT_EQ(c->stream.send_buffer, 4718592u);
  ASSERT_EQ(c->nodes.size(), 8u);
  int pairs = 0, singles = 0;
  for (const DisplayNode& n : c->nodes) (n.tiles.size() == 2 ? pairs : singles)++;
  EXPECT_EQ(pairs, 7);
  EXPECT_EQ(singles, 1);
  ASSERT_EQ(c->nics.size(), 4u);
  std::vector<int> per_nic(4);
  for (const TileRoute& r : c->routes) per_nic[r.nic]++;
  EXPECT_THAT(per_nic, ::testing::UnorderedElementsAre(4, 4, 4, 3));
  // 22 fps x 15 tiles x 12,288,000 bytes = 32.4 Gbit/s of pixels.
  EXPECT_NEAR(c->wall.tile_bits_per_second() * 15 / 1e9, 32.44, 0.01);
}

// Live sources (issue 44, docs/live.md): named as movies, each once, an
// SDP file each, bars or fill.
TEST(WallConfig, ReadsLiveSourcesAndNamesWhatIsWrongWithOne) {
  auto c =
      ParseWallConfig(std::string(kTwoTiles) +
                          "[[live]]\nname = \"viz\"\nsdp = \"viz.sdp\"\n"
                          "[[live]]\nname = \"cam-2\"\nsdp = \"/etc/cam.sdp\"\nfit = \"fill\"\n",
                      "w.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->live.size(), 2u);
  EXPECT_EQ(c->live[0].name, "viz");
  EXPECT_EQ(c->live[0].fit, "bars");
  EXPECT_EQ(c->live[1].sdp, "/etc/cam.sdp");
  EXPECT_EQ(c->live[1].fit, "fill");
  const std::string viz = "[[live]]\nname = \"viz\"\nsdp = \"a.sdp\"\n";
  EXPECT_THAT(Error(std::string(kTwoTiles) + viz + viz), HasSubstr("'viz' names live[0] already"));
  EXPECT_THAT(Error(std::string(kTwoTiles) + "[[live]]\nname = \"../x\"\nsdp = \"a.sdp\"\n"),
              HasSubstr("live[0].name"));
  EXPECT_THAT(Error(std::string(kTwoTiles) + "[[live]]\nname = \"viz\"\n"),
              HasSubstr("live[0].sdp"));
  EXPECT_THAT(Error(std::string(kTwoTiles) + viz + "fit = \"crop\"\n"),
              HasSubstr("'crop' is not a fit"));
  EXPECT_THAT(Error(std::string(kTwoTiles) + viz + "port = 5004\n"), HasSubstr("port"));
}

TEST(WallConfig, LoadsTheDemoAndTestWalls) {
  for (const char* name : {"demo-5x3.toml", "test-2x2.toml"}) {
    auto c = LoadWallConfig(kConfigs + name);
    EXPECT_TRUE(c.ok()) << name << ": " << c.status().message();
  }
}

TEST(WallConfig, DefaultsStreamEveryTileToLoopback) {
  const WallConfig c = DefaultWallConfig({5, 3});
  ASSERT_EQ(c.routes.size(), 15u);
  ASSERT_EQ(c.nodes.size(), 1u);
  EXPECT_EQ(c.nodes[0].address, "127.0.0.1");
  for (uint32_t t = 0; t < 15; ++t) EXPECT_EQ(c.routes[t].port, 50000 + t);
  EXPECT_EQ(c.control.listen_address, "127.0.0.1");
}

TEST(WallConfig, EmptyFileIsTheDefaultWall) {
  auto c = ParseWallConfig("", "empty.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->wall.layout, (Layout{5, 3}));
  EXPECT_EQ(c->routes.size(), 15u);
}

TEST(WallConfig, PortsAndDisplaysCanBeGivenPerTile) {
  auto c = ParseWallConfig(
      With("tiles = [\"r0c0\"]", "tiles = [\"r0c0\"]\nports = [6000]\ndisplays = [2]"),
      "wall.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->routes[0].port, 6000);
  EXPECT_EQ(c->routes[0].display, 2);
  EXPECT_EQ(c->routes[1].port, 50001);
}

TEST(WallConfig, ATileCanTakeAnSdpFileOrAnySsrc) {
  auto c = ParseWallConfig(
      With("tiles = [\"r0c0\"]", "tiles = [\"r0c0\"]\nsdp = [\"gst.sdp\"]\nany_ssrc = [\"r0c0\"]"),
      "wall.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->routes[0].sdp, "gst.sdp");
  EXPECT_TRUE(c->routes[0].any_ssrc);
  EXPECT_EQ(c->routes[1].sdp, "");
  EXPECT_FALSE(c->routes[1].any_ssrc);
}

TEST(WallConfig, RejectsAnSdpListThatIsNotOnePerTile) {
  EXPECT_THAT(Error(With("tiles = [\"r0c0\"]", "tiles = [\"r0c0\"]\nsdp = [\"a.sdp\", \"b.sdp\"]")),
              HasSubstr("2 SDP files for 1 tiles"));
}

TEST(WallConfig, RejectsAnySsrcForATileOfAnotherNode) {
  EXPECT_THAT(Error(With("tiles = [\"r0c0\"]", "tiles = [\"r0c0\"]\nany_ssrc = [\"r0c1\"]")),
              HasSubstr("any_ssrc: tile r0c1 is not one of this node's tiles"));
}

TEST(WallConfig, RetransmissionIsOnForOurOwnStreamsOnly) {
  auto c = ParseWallConfig(With("tiles = [\"r0c0\"]", "tiles = [\"r0c0\"]\nsdp = [\"gst.sdp\"]"),
                           "wall.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_FALSE(c->routes[0].retransmission) << "a third-party sender's stream";
  EXPECT_TRUE(c->routes[1].retransmission);
  EXPECT_EQ(c->stream.rtx_payload_type, 97);
  EXPECT_DOUBLE_EQ(c->stream.retransmission_share, 0.05);
}

TEST(WallConfig, RetransmissionGoesOffPerTileOrForTheWall) {
  auto tile = ParseWallConfig(
      With("tiles = [\"r0c1\"]", "tiles = [\"r0c1\"]\nno_retransmission = [\"r0c1\"]"),
      "wall.toml");
  ASSERT_TRUE(tile.ok()) << tile.status().message();
  EXPECT_TRUE(tile->routes[0].retransmission);
  EXPECT_FALSE(tile->routes[1].retransmission);
  auto wall =
      ParseWallConfig(std::string(kTwoTiles) + "\n[stream]\nretransmission = false\n", "wall.toml");
  ASSERT_TRUE(wall.ok()) << wall.status().message();
  EXPECT_FALSE(wall->routes[0].retransmission);
  EXPECT_FALSE(wall->routes[1].retransmission);
}

TEST(WallConfig, RejectsNoRetransmissionForATileOfAnotherNode) {
  EXPECT_THAT(
      Error(With("tiles = [\"r0c0\"]", "tiles = [\"r0c0\"]\nno_retransmission = [\"r0c1\"]")),
      HasSubstr("no_retransmission: tile r0c1 is not one of this node's tiles"));
}

TEST(WallConfig, RejectsAnRtxPayloadTypeThatIsTheStreamsOwn) {
  EXPECT_THAT(Error(std::string(kTwoTiles) + "\n[stream]\nrtx_payload_type = 96\n"),
              HasSubstr("stream.rtx_payload_type: 96 is outside the dynamic range 96..127 or the "
                        "stream's own payload type"));
}

TEST(WallConfig, RejectsARetransmissionShareOutsideZeroToOne) {
  EXPECT_THAT(Error(std::string(kTwoTiles) + "\n[stream]\nretransmission_share = 1.5\n"),
              HasSubstr("stream.retransmission_share: 1.5 is outside 0..1"));
}

TEST(WallConfig, MessageNamesFileLineAndKey) {
  const std::string e = Error(With("tile_width = 64", "tile_width = 0"));
  EXPECT_THAT(e, HasSubstr("wall.toml:5: wall.tile_width: 0 is outside 1..32767"));
}

TEST(WallConfig, RejectsSyntaxErrorWithLine) {
  EXPECT_THAT(Error("[wall]\ncolumns = = 3\n"), HasSubstr("wall.toml:2: TOML syntax"));
}

TEST(WallConfig, RejectsUnknownKey) {
  EXPECT_THAT(Error(With("tile_height = 32", "tile_hieght = 32")),
              HasSubstr("wall.tile_hieght: unknown key"));
  EXPECT_THAT(Error(std::string(kTwoTiles) + "[display]\nx = 1\n"),
              HasSubstr("display: unknown key"));
}

TEST(WallConfig, RejectsWrongType) {
  EXPECT_THAT(Error(With("columns = 2", "columns = \"2\"")),
              HasSubstr("wall.columns: expected an integer, got a string"));
}

TEST(WallConfig, RejectsTileOutsideLayout) {
  EXPECT_THAT(Error(With("tiles = [\"r0c1\"]", "tiles = [\"r0c1\", \"r1c0\"]")),
              HasSubstr("node[1].tiles: tile r1c0 is outside the 2x1 layout"));
}

TEST(WallConfig, RejectsMalformedTileName) {
  EXPECT_THAT(Error(With("tiles = [\"r0c1\"]", "tiles = [\"tile1\"]")),
              HasSubstr("node[1].tiles[0]: tile name 'tile1' is not of the form r<row>c<column>"));
}

TEST(WallConfig, RejectsTileOnTwoNodes) {
  EXPECT_THAT(Error(With("tiles = [\"r0c1\"]", "tiles = [\"r0c1\", \"r0c0\"]")),
              HasSubstr("tile r0c0 is also on display node 'a'"));
}

TEST(WallConfig, RejectsTileOnNoNode) {
  EXPECT_THAT(Error(With("columns = 2", "columns = 3")),
              HasSubstr("tile r0c2 is on no display node"));
}

TEST(WallConfig, RejectsPortClash) {
  const std::string toml =
      With("address = \"127.0.0.2\"", "address = \"127.0.0.1\"\nports = [50000]");
  EXPECT_THAT(Error(toml), HasSubstr("port 50000 on 127.0.0.1 is used by tiles r0c0 and r0c1"));
}

TEST(WallConfig, RejectsControlPortClash) {
  EXPECT_THAT(Error(std::string(kTwoTiles) + "[control]\nport = 50001\n"),
              HasSubstr("control.port: port 50001 is also the port of tile r0c1"));
}

TEST(WallConfig, RejectsUnknownNic) {
  EXPECT_THAT(Error(With("tiles = [\"r0c0\"]", "tiles = [\"r0c0\"]\nnic = \"eth9\"")),
              HasSubstr("node[0].nic: unknown NIC 'eth9' (the [[nic]] entries are: eth0)"));
}

TEST(WallConfig, RejectsMtuTooSmallForOnePixel) {
  EXPECT_THAT(Error(std::string(kTwoTiles) + "[stream]\nmtu = 40\n"),
              HasSubstr("stream.mtu: MTU 40 is outside 576..65535"));
}

TEST(WallConfig, RejectsDuplicateNodeAndNicNames) {
  EXPECT_THAT(Error(With("name = \"b\"", "name = \"a\"")),
              HasSubstr("display node 'a' is listed twice"));
  EXPECT_THAT(Error(std::string(kTwoTiles) + "[[nic]]\nname = \"eth0\"\n"),
              HasSubstr("NIC 'eth0' is listed twice"));
}

TEST(WallConfig, RejectsBadAddresses) {
  EXPECT_THAT(Error(With("address = \"192.0.2.1\"", "address = \"999.1.1.1\"")),
              HasSubstr("nic[0].address: '999.1.1.1' is not an IPv4 or IPv6 address"));
  EXPECT_THAT(Error(With("address = \"127.0.0.2\"", "address = \"bad host!\"")),
              HasSubstr("node[1].address"));
  EXPECT_THAT(Error(With("address = \"127.0.0.2\"", "address = \"300.1.1.1\"")),
              HasSubstr("node[1].address: '300.1.1.1' is not an address or host name"));
  EXPECT_THAT(Error(With("address = \"127.0.0.2\"", "address = \"-node.wall\"")),
              HasSubstr("node[1].address"));
  EXPECT_TRUE(ParseWallConfig(With("address = \"127.0.0.2\"", "address = \"tile-02.wall.example\""),
                              "w.toml")
                  .ok());
}

TEST(WallConfig, RejectsNonLoopbackControlWithoutToken) {
  EXPECT_THAT(Error(std::string(kTwoTiles) + "[control]\nlisten = \"0.0.0.0\"\n"),
              HasSubstr("control.token_file: the control listener on 0.0.0.0 is not loopback"));
  auto ok = ParseWallConfig(std::string(kTwoTiles) +
                                "[control]\nlisten = \"0.0.0.0\"\naddress = \"192.0.2.7\"\n"
                                "token_file = \"/etc/wall.token\"\n",
                            "wall.toml");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->control.client_address(), "192.0.2.7");
}

TEST(WallConfig, ReadsTheWebSideAndChecksItsAddressesAndPorts) {
  auto c = ParseWallConfig(std::string(kTwoTiles) +
                               "[http]\nport = 8080\nnode_port_base = 9100\nmax_clients = 4\n"
                               "max_body_bytes = 1024\ntimeout_s = 2\nthumbnail_period_ms = 0\n",
                           "w.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->http.port, 8080);
  EXPECT_EQ(c->http.node_port(1), 9101);
  EXPECT_EQ(c->http.max_clients, 4u);
  EXPECT_EQ(c->http.thumbnail_period_ms, 0u);
  // The limits against hostile clients (issue 35), and the listener's
  // options made of them.
  auto limits = ParseWallConfig(
      std::string(kTwoTiles) +
          "[http]\nmax_queued = 9\nmax_connections = 100\nmax_connections_per_address = 7\n"
          "header_timeout_ms = 1500\nkeep_alive_s = 30\nrequests_per_second_per_address = 0\n"
          "[library]\npath = \"/data/movies\"\n",
      "w.toml");
  ASSERT_TRUE(limits.ok()) << limits.status().message();
  EXPECT_EQ(limits->library_path, "/data/movies");
  auto o = HttpListenerOptions(*limits, "http", "127.0.0.1", 8080);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->max_queued, 9u);
  EXPECT_EQ(o->limits.max_connections, 100u);
  EXPECT_EQ(o->limits.max_connections_per_address, 7u);
  EXPECT_EQ(o->limits.header_timeout_ms, 1500u);
  EXPECT_EQ(o->limits.keep_alive_s, 30u);
  EXPECT_EQ(o->limits.requests_per_second_per_address, 0u);
  EXPECT_THAT(Error(std::string(kTwoTiles) + "[http]\nheader_timeout_ms = 10\n"),
              HasSubstr("header_timeout_ms"));
  EXPECT_THAT(Error(std::string(kTwoTiles) + "[library]\nshelf = 1\n"), HasSubstr("shelf"));
  const WallConfig defaults = DefaultWallConfig({1, 1});
  EXPECT_EQ(defaults.http.port, 7480);
  EXPECT_EQ(defaults.http.node_port(0), 7481);
  EXPECT_EQ(defaults.http.listen_address, "127.0.0.1");
  EXPECT_THAT(Error(std::string(kTwoTiles) + "[http]\nlisten = \"0.0.0.0\"\n"),
              HasSubstr("control.token_file: http.listen = '0.0.0.0' is not loopback"));
  EXPECT_THAT(Error(std::string(kTwoTiles) + "[http]\nnode_listen = \"10.0.0.1\"\n"),
              HasSubstr("http.node_listen = '10.0.0.1' is not loopback"));
  EXPECT_TRUE(
      ParseWallConfig(std::string(kTwoTiles) +
                          "[control]\ntoken_file = \"/etc/t\"\n[http]\nlisten = \"0.0.0.0\"\n",
                      "w.toml")
          .ok());
  EXPECT_THAT(Error(std::string(kTwoTiles) + "[http]\nlisten = \"wall\"\n"),
              HasSubstr("http.listen: 'wall' is not an IPv4 or IPv6 address"));
  EXPECT_THAT(Error(std::string(kTwoTiles) + "[http]\nport = 7470\n"),
              HasSubstr("http.port: port 7470 is also control.port"));
  EXPECT_THAT(Error(std::string(kTwoTiles) + "[http]\nnode_port_base = 7469\n"),
              HasSubstr("the nodes' ports 7469..7470 include port 7470"));
  EXPECT_THAT(Error(std::string(kTwoTiles) + "[http]\nnode_port_base = 65535\n"),
              HasSubstr("http.node_port_base: 65535 + 2 nodes is beyond 65535"));
  EXPECT_THAT(Error(std::string(kTwoTiles) + "[http]\nmax_body_bytes = 1\n"),
              HasSubstr("http.max_body_bytes"));
  EXPECT_THAT(Error(std::string(kTwoTiles) + "[http]\nbogus = 1\n"), HasSubstr("bogus"));
}

TEST(WallConfig, RejectsWildcardControlWithoutClientAddress) {
  EXPECT_THAT(
      Error(std::string(kTwoTiles) + "[control]\nlisten = \"::\"\ntoken_file = \"/etc/t\"\n"),
      HasSubstr("control.address: the control listener is on every address (::)"));
}

TEST(WallConfig, ReadsTheJoystickMap) {
  auto c = ParseWallConfig(
      std::string(kTwoTiles) + "[joystick]\nscrub_axis = 2\nscrub_speed = 4.5\ntoggle_button = 7\n",
      "w.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->joystick.scrub_axis, 2u);
  EXPECT_DOUBLE_EQ(c->joystick.scrub_speed, 4.5);
  EXPECT_EQ(c->joystick.toggle_button, 7u);
  EXPECT_EQ(c->joystick.step_forward_button, 5u);  // default
  EXPECT_THAT(Error(std::string(kTwoTiles) + "[joystick]\ndead_zone = 1.5\n"),
              HasSubstr("joystick.dead_zone: 1.5 is outside 0..0.9"));
}

TEST(WallConfig, ReadsSyncSettings) {
  auto c = ParseWallConfig(
      std::string(kTwoTiles) + "[sync]\npolicy = \"partial\"\ndeadline_ms = 20\n", "w.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(c->sync.enabled);
  EXPECT_TRUE(c->sync.partial);
  EXPECT_EQ(c->sync.deadline_after_tick_ns(25), 40'000'000 + 20'000'000);
  c = ParseWallConfig(kTwoTiles, "w.toml");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->sync.partial);
  EXPECT_EQ(c->sync.deadline_after_tick_ns(25), 80'000'000);  // one interval to send, one of slack
  EXPECT_THAT(Error(std::string(kTwoTiles) + "[sync]\npolicy = \"wait\"\n"),
              HasSubstr("sync.policy: 'wait' is not a policy (skip or partial)"));
  EXPECT_THAT(Error(std::string(kTwoTiles) + "[sync]\nenable = true\n"),
              HasSubstr("sync.enable: unknown key"));
}

// A playout latency: a number of ms or "auto" (within max_latency_ms);
// none by default. A path that reorders: the wait before a NACK.
TEST(WallConfig, ReadsThePlayoutLatencyAndTheReorderWindow) {
  auto c = ParseWallConfig(kTwoTiles, "w.toml");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->sync.timed());
  EXPECT_EQ(c->stream.reorder_ms, 0);
  c = ParseWallConfig(
      std::string(kTwoTiles) + "[stream]\nreorder_ms = 2.5\n[sync]\nlatency_ms = 120\n", "w.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(c->sync.timed());
  EXPECT_EQ(c->sync.latency_bound_ns(), 120'000'000);
  EXPECT_EQ(c->sync.deadline_after_tick_ns(25), 40'000'000 + 120'000'000);
  EXPECT_DOUBLE_EQ(c->stream.reorder_ms, 2.5);
  c = ParseWallConfig(
      std::string(kTwoTiles) + "[sync]\nlatency_ms = \"auto\"\nmax_latency_ms = 300\n", "w.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->sync.latency, SyncSettings::kAutoLatency);
  EXPECT_EQ(c->sync.latency_bound_ns(), 300'000'000);
  EXPECT_THAT(Error(std::string(kTwoTiles) + "[sync]\nlatency_ms = \"soon\"\n"),
              HasSubstr("sync.latency_ms: 'soon' is not a number of ms or \"auto\""));
  EXPECT_THAT(Error(std::string(kTwoTiles) + "[sync]\nlatency_ms = -3\n"),
              HasSubstr("sync.latency_ms: -3 is outside 0..10000"));
  EXPECT_THAT(Error(std::string(kTwoTiles) + "[stream]\nreorder_ms = 5000\n"),
              HasSubstr("stream.reorder_ms: 5000 is outside 0..1000"));
}

TEST(WallConfig, RejectsPayloadTypeOutsideDynamicRange) {
  EXPECT_THAT(Error(std::string(kTwoTiles) + "[stream]\npayload_type = 33\n"),
              HasSubstr("stream.payload_type: 33 is outside the dynamic range 96..127"));
}

TEST(WallConfig, ReportsEveryProblemAtOnce) {
  const std::string e =
      Error(With("tile_width = 64\ntile_height = 32", "tile_width = -1\ntile_height = 99999"));
  EXPECT_THAT(e, HasSubstr("wall.tile_width"));
  EXPECT_THAT(e, HasSubstr("wall.tile_height"));
}

TEST(WallConfig, ValidateCatchesFlagOverridesThatBreakTheConfig) {
  auto c = ParseWallConfig(kTwoTiles, "wall.toml");
  ASSERT_TRUE(c.ok());
  c->wall.layout = {1, 1};  // as --layout 1x1 would
  const Status s = ValidateWallConfig(&*c);
  EXPECT_THAT(s.message(),
              HasSubstr("wall.toml:20: node[1].tiles: tile r0c1 is outside the 1x1 layout"));
}

TEST(WallConfig, MissingFileIsAnIoError) {
  auto c = LoadWallConfig("/nonexistent/wall.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("/nonexistent/wall.toml"));
}

}  // namespace
}  // namespace tilestream
