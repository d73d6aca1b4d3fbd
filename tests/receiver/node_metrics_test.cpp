#include "receiver/node_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/promtool.h"

namespace tilestream {
namespace {

using ::testing::HasSubstr;

NodeMetricsView TwoTiles() {
  NodeMetricsView v;
  v.node = "left";
  v.tile_names = {"r0c0", "r1c0"};
  v.tiles.resize(2);
  v.tiles[1].socket.bytes = 9000;
  v.tiles[1].socket.kernel_drops = 3;
  v.tiles[1].socket.catch_ups = 6;
  v.tiles[1].assembler.lost = 4;
  v.tiles[1].assembler.frames_complete = 30;
  v.tiles[1].assembler.malformed[static_cast<size_t>(ParseError::kBadVersion)] = 2;
  v.shown.presented = 29;
  v.shown.partial = 1;
  v.shown.skipped = 5;
  v.fps = 25;
  return v;
}

TEST(NodeMetrics, PerTileCountersMalformedByReasonAndTheNode) {
  const std::string text = NodeMetricsText(TwoTiles());
  EXPECT_THAT(
      text,
      HasSubstr("tilestream_receiver_received_bytes_total{tile=\"r1c0\",node=\"left\"} 9000\n"));
  EXPECT_THAT(text,
              HasSubstr("tilestream_receiver_kernel_drops_total{tile=\"r1c0\",node=\"left\"} 3\n"));
  EXPECT_THAT(text,
              HasSubstr("tilestream_receiver_catch_ups_total{tile=\"r1c0\",node=\"left\"} 6\n"));
  EXPECT_THAT(text,
              HasSubstr("tilestream_receiver_lost_packets_total{tile=\"r1c0\",node=\"left\"} 4\n"));
  EXPECT_THAT(
      text,
      HasSubstr("tilestream_receiver_frames_complete_total{tile=\"r1c0\",node=\"left\"} 30\n"));
  EXPECT_THAT(text,
              HasSubstr("tilestream_receiver_malformed_packets_total{tile=\"r1c0\",node=\"left\","
                        "reason=\"" +
                        std::string(ParseErrorName(ParseError::kBadVersion)) + "\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("tilestream_receiver_ticks_shown_total{node=\"left\"} 30\n"));
  EXPECT_THAT(text, HasSubstr("tilestream_receiver_ticks_skipped_total{node=\"left\"} 5\n"));
  EXPECT_THAT(text, HasSubstr("tilestream_receiver_fps{node=\"left\"} 25\n"));
}

TEST(NodeMetrics, PromtoolFindsNothingToSay) {
  NodeMetricsView v = TwoTiles();
  v.node = "a \"quoted\" node\\";
  const auto checked = testing::PromtoolCheck(NodeMetricsText(v));
  EXPECT_EQ(checked.exit_code, 0) << checked.output;
}

}  // namespace
}  // namespace tilestream
