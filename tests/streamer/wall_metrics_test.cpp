#include "streamer/wall_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/streamer/wall_state.h"
#include "tests/support/promtool.h"

namespace tilestream {
namespace {

using ::testing::HasSubstr;

using testing::WallState;

TEST(WallMetrics, TilesSyncAndPlaybackInPrometheusText) {
  WallState w;
  w.latest[1].bytes = 123456;
  w.latest[1].frames = 30;
  w.latest[1].disk_read_ns = 1'500'000'000;
  w.receivers[0] = {true, {25, 0, 0, 21'500, 1'250, 40, 2}};
  w.latency_ns = 84'000'000;
  w.node_rtt = {{20'000'000, 1'000'000, 3}};
  w.shedder.Look(90, 10, 2);
  w.shedder.Look(90, 10, 2);  // 10% of the 2 tiles' frames skipped twice: keep 0.88
  for (int i = 0; i < 25; ++i) w.shedder.Keep();
  Playback playback(100, 30, {});
  const std::string text = WallMetrics(w.View(2), &playback);
  EXPECT_THAT(text, HasSubstr("# TYPE tilestream_tile_sent_bytes_total counter\n"));
  EXPECT_THAT(text, HasSubstr("tilestream_tile_sent_bytes_total{tile=\"r0c1\",nic=\"default\",node="
                              "\"localhost\"} 123456\n"));
  EXPECT_THAT(text, HasSubstr("tilestream_tile_frames_sent_total{tile=\"r0c1\""));
  EXPECT_THAT(text,
              HasSubstr("tilestream_tile_disk_read_seconds_total{tile=\"r0c1\",nic=\"default\","
                        "node=\"localhost\"} 1.5\n"));
  EXPECT_THAT(text,
              HasSubstr("tilestream_display_tile_fps{tile=\"r0c0\",node=\"localhost\"} 25\n"));
  EXPECT_THAT(text, HasSubstr("tilestream_wall_skew_seconds_bucket{le=\"+Inf\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("tilestream_playback_frames 100\n"));
  EXPECT_THAT(text, HasSubstr("tilestream_playback_playing 1\n"));
  EXPECT_THAT(text, HasSubstr("tilestream_sync_nodes 2\n"));
  EXPECT_THAT(text, HasSubstr("tilestream_wall_ticks_shed_total 3\n"));
  EXPECT_THAT(text, HasSubstr("tilestream_wall_ticks_sent_ratio 0.88\n"));
  EXPECT_THAT(text, HasSubstr("tilestream_sync_latency_seconds 0.084\n"));
  EXPECT_THAT(text, HasSubstr("tilestream_sync_node_rtt_seconds{node=\"localhost\"} 0.02\n"));
  EXPECT_THAT(text, HasSubstr("tilestream_display_tile_repair_rtt_seconds{tile=\"r0c0\",node="
                              "\"localhost\"} 0.0215\n"));
  EXPECT_THAT(text, HasSubstr("tilestream_display_tile_repair_rtt_deviation_seconds{tile=\"r0c0\","
                              "node=\"localhost\"} 0.00125\n"));
  EXPECT_THAT(text, HasSubstr("tilestream_display_tile_requested_total{tile=\"r0c0\",node="
                              "\"localhost\"} 40\n"));
  EXPECT_THAT(text, HasSubstr("tilestream_display_tile_late_retransmissions_total{tile=\"r0c0\","
                              "node=\"localhost\"} 2\n"));
}

// The live sources' entries of `status` (streamer/live_sources.h), per
// source: receiving and slate as 0 or 1, the counters as they are.
nlohmann::json LiveStatus() {
  return nlohmann::json::parse(R"([
    {"name": "cam", "receiving": false, "slate": true, "frames": 120, "pictures": 61,
     "incomplete": 1, "lost": 3, "recovered": 2, "strangers": 999, "malformed": 4,
     "kernel_drops": 0, "size": "1280x800"},
    {"name": "viz", "receiving": true, "slate": false, "frames": 7, "pictures": 7}])");
}

TEST(WallMetrics, LiveSourcesByName) {
  WallState w;
  const nlohmann::json live = LiveStatus();
  const std::string text = WallMetrics(w.View(2), nullptr, &live);
  EXPECT_THAT(text, HasSubstr("# TYPE tilestream_live_receiving gauge\n"));
  EXPECT_THAT(text, HasSubstr("tilestream_live_receiving{source=\"cam\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("tilestream_live_receiving{source=\"viz\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("tilestream_live_slate{source=\"cam\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("tilestream_live_frames_total{source=\"cam\"} 120\n"));
  EXPECT_THAT(text, HasSubstr("tilestream_live_pictures_total{source=\"viz\"} 7\n"));
  EXPECT_THAT(text, HasSubstr("tilestream_live_stranger_packets_total{source=\"cam\"} 999\n"));
  EXPECT_THAT(text,
              ::testing::Not(HasSubstr("tilestream_live_lost_packets_total{source=\"viz\"}")));
}

TEST(WallMetrics, PromtoolFindsNothingToSay) {
  WallState w;
  Playback playback(100, 30, {});
  const nlohmann::json live = LiveStatus();
  const auto checked = testing::PromtoolCheck(WallMetrics(w.View(2), &playback, &live));
  EXPECT_EQ(checked.exit_code, 0) << checked.output;
  const auto bench = testing::PromtoolCheck(WallMetrics(w.View(2), nullptr));
  EXPECT_EQ(bench.exit_code, 0) << bench.output;
}

}  // namespace
}  // namespace tilestream
