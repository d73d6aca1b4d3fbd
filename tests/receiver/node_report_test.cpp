#include "receiver/node_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "common/base/json_text.h"

namespace tilestream {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TileReceiverStats Tile(uint64_t bytes, uint64_t complete, uint64_t lost) {
  TileReceiverStats s;
  s.socket.bytes = bytes;
  s.assembler.frames_complete = complete;
  s.assembler.lost = lost;
  s.assembler.packets = 100;
  s.placement.placed = 90;
  return s;
}

NodeFinal TwoTiles() {
  NodeFinal f;
  f.node = "left";
  f.seconds = 2.0;
  f.tile_names = {"r0c0", "r0c1"};
  f.tiles = {Tile(250'000'000, 60, 0), Tile(125'000'000, 59, 3)};
  return f;
}

TEST(NodeReport, TextHasTheNodeAndALinePerTile) {
  const std::string text = FinalNodeText(TwoTiles());
  EXPECT_THAT(text, HasSubstr("final report: 2.0 s, node left\n"));
  EXPECT_THAT(text, HasSubstr("tile r0c0     1000.0 Mbps  frames 60 complete"));
  EXPECT_THAT(text, HasSubstr("tile r0c1      500.0 Mbps  frames 59 complete, 0 incomplete  "
                              "packets 100  lost 3"));
  EXPECT_THAT(text, HasSubstr("placed 90"));
  EXPECT_THAT(text, Not(HasSubstr("swap sync")));
  EXPECT_THAT(text, Not(HasSubstr("retransmission")));
}

TEST(NodeReport, SyncWindowsAndRetransmissionAreSaidWhereTheyRan) {
  NodeFinal f = TwoTiles();
  f.window_updates = 120;
  f.sync = PresentCounts{58, 1, 2, 3};
  f.tiles[1].loss.nacks = 4;
  f.tiles[1].loss.requested = 6;
  f.tiles[1].assembler.recovered = 5;
  const std::string text = FinalNodeText(f);
  EXPECT_THAT(text, HasSubstr("node left, 120 window updates"));
  EXPECT_THAT(text, HasSubstr("swap sync: 58 ticks presented, 1 partial, 2 skipped, 3 tile "
                              "frames released but missing here; acted on at normal priority"));
  f.sync->real_time = true;
  f.sync->windows_over_budget = 4;
  EXPECT_THAT(FinalNodeText(f),
              HasSubstr("acted on at SCHED_FIFO (4 windows of 100 ms over its 5-ms budget)"));
  EXPECT_THAT(text, HasSubstr("tile r0c1   retransmission: 4 NACKs for 6 packets"));
  EXPECT_THAT(text, Not(HasSubstr("tile r0c0   retransmission")));
}

TEST(NodeReport, JsonHasEveryTilesCounters) {
  NodeFinal f = TwoTiles();
  f.sync = PresentCounts{58, 1, 2, 3};
  f.tiles[0].assembler.malformed[1] = 7;
  const nlohmann::json j = FinalNodeJson(f);
  EXPECT_EQ(j["node"], "left");
  EXPECT_DOUBLE_EQ(j["duration_s"].get<double>(), 2.0);
  EXPECT_FALSE(j.contains("window_updates"));
  EXPECT_EQ(j["sync"]["presented"], 58);
  EXPECT_EQ(j["sync"]["missing"], 3);
  EXPECT_EQ(j["sync"]["real_time"], false);
  EXPECT_EQ(j["sync"]["windows_over_budget"], 0);
  ASSERT_EQ(j["tiles"].size(), 2u);
  EXPECT_EQ(j["tiles"][1]["tile"], "r0c1");
  EXPECT_DOUBLE_EQ(j["tiles"][1]["mbps"].get<double>(), 500.0);
  EXPECT_EQ(j["tiles"][1]["lost"], 3);
  EXPECT_EQ(j["tiles"][0]["placed"], 90);
  EXPECT_EQ(j["tiles"][0]["malformed"][ParseErrorName(static_cast<ParseError>(1))], 7);
  EXPECT_TRUE(j["tiles"][1]["malformed"].is_null());
}

// A node or tile name from a file (an SDP session name, a config) may hold
// any bytes: the report still comes out, the bad bytes replaced.
TEST(NodeReport, NamesThatAreNotUtf8DoNotBreakTheJson) {
  NodeFinal f = TwoTiles();
  f.node = "left\xff\xfe";
  const std::string text = JsonText(FinalNodeJson(f), 2);
  EXPECT_NE(text.find("\"node\": \"left\xef\xbf\xbd"), std::string::npos) << text;
}

TEST(NodeReport, AReceiveErrorThatEndedATileIsInBothReports) {
  NodeFinal f = TwoTiles();
  f.tiles[1].receive_error.error = ENOMEM;
  EXPECT_THAT(FinalNodeText(f),
              HasSubstr("tile r0c1   receiving stopped: " + std::string(std::strerror(ENOMEM))));
  const nlohmann::json j = FinalNodeJson(f);
  EXPECT_EQ(j["tiles"][1]["receive_error"], std::strerror(ENOMEM));
  EXPECT_FALSE(j["tiles"][0].contains("receive_error"));
}

}  // namespace
}  // namespace tilestream
