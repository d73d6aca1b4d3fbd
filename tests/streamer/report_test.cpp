#include "streamer/report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace tilestream {
namespace {

using ::testing::HasSubstr;

TileStats Stats(uint32_t tile, uint64_t bytes) {
  TileStats s;
  s.tile = tile;
  s.bytes = bytes;
  s.elapsed_ns = 2'000'000'000;
  s.cpu_ns = 500'000'000;
  s.disk_bytes = 100'000'000;
  s.frames = 44;
  return s;
}

TEST(Report, SummarizesRatesOverTheElapsedTime) {
  const WallConfig c = DefaultWallConfig({5, 3});
  const StreamSummary s = Summarize(Stats(1, 546'850'000), c);
  EXPECT_EQ(s.tile, "r0c1");
  EXPECT_EQ(s.nic, "default");
  EXPECT_NEAR(s.mbps, 2187.4, 0.01);
  EXPECT_NEAR(s.cpu_percent, 25.0, 1e-9);
  EXPECT_NEAR(s.disk_mbytes_per_s, 50.0, 1e-9);
}

TEST(Report, FinalReportHasALinePerStreamAndATotal) {
  const WallConfig c = DefaultWallConfig({2, 1});
  std::vector<StreamSummary> streams = {Summarize(Stats(0, 250'000'000), c),
                                        Summarize(Stats(1, 250'000'000), c)};
  const std::string r = FinalReport(2.0, streams);
  EXPECT_THAT(
      r, HasSubstr(
             "tile r0c0   nic default     1000.0 Mbps   25.0 %CPU  0 send errors  disk 50 MB/s"));
  EXPECT_THAT(r, HasSubstr("tile r0c1"));
  EXPECT_THAT(r, HasSubstr("total  2  streams      2000.0 Mbps"));
  EXPECT_THAT(SecondLine(1.0, streams),
              HasSubstr("2 streams  2.00 Gbit/s (per stream 1.00..1.00)"));
}

TEST(Report, JsonHasStreamsAndAggregate) {
  const WallConfig c = DefaultWallConfig({2, 1});
  std::vector<StreamSummary> streams = {Summarize(Stats(0, 250'000'000), c),
                                        Summarize(Stats(1, 125'000'000), c)};
  const auto j = nlohmann::json::parse(FinalReportJson(2.0, streams, c, true));
  EXPECT_EQ(j["mode"], "bench");
  ASSERT_EQ(j["streams"].size(), 2u);
  EXPECT_EQ(j["streams"][1]["tile"], "r0c1");
  EXPECT_NEAR(j["aggregate"]["mbps"].get<double>(), 1500.0, 1e-6);
  EXPECT_EQ(j["aggregate"]["frames"], 88);
  EXPECT_EQ(j["streams"][0]["ticks_seen_late"], 0);
}

TEST(Report, JsonSaysHowOnTimeTheCoordinatorSentItsTicks) {
  const WallConfig c = DefaultWallConfig({2, 1});
  const std::vector<StreamSummary> streams = {Summarize(Stats(0, 1000), c)};
  TickTiming ticks;
  ticks.sent = 100;
  ticks.late = 2;
  ticks.max_late_ns = 12'500'000;
  ticks.max_broadcast_ns = 300'000;
  ticks.real_time = true;
  ticks.windows_over_budget = 3;
  const auto j = nlohmann::json::parse(FinalReportJson(2.0, streams, c, false, nullptr, &ticks));
  EXPECT_EQ(j["ticks"]["sent"], 100);
  EXPECT_EQ(j["ticks"]["sent_late"], 2);
  EXPECT_DOUBLE_EQ(j["ticks"]["max_late_ms"].get<double>(), 12.5);
  EXPECT_DOUBLE_EQ(j["ticks"]["max_broadcast_ms"].get<double>(), 0.3);
  EXPECT_EQ(j["ticks"]["real_time"], true);
  EXPECT_EQ(j["ticks"]["windows_over_budget"], 3);
  EXPECT_FALSE(nlohmann::json::parse(FinalReportJson(2.0, streams, c, true)).contains("ticks"));
}

TEST(Report, DeltaIsWhatWasCountedBetweenTwoReports) {
  TileStats before = Stats(2, 1000), now = Stats(2, 4000);
  now.frames = 50;
  now.send_errors = 5;
  before.send_errors = 2;
  now.elapsed_ns = 3'000'000'000;
  const TileStats d = Delta(now, before);
  EXPECT_EQ(d.tile, 2u);
  EXPECT_EQ(d.bytes, 3000u);
  EXPECT_EQ(d.frames, 6u);
  EXPECT_EQ(d.send_errors, 3u);
  EXPECT_EQ(d.elapsed_ns, 1'000'000'000);
}

TEST(Report, ThePlanNamesEveryTilesRankDestinationAndSendPath) {
  Wall wall;
  wall.config = DefaultWallConfig({2, 1});
  StreamerOptions o;
  const RankPlan plan(wall.config, 1);  // one rank streams both tiles
  std::vector<ReadyMessage> ready(2);
  ready[0].gso = 1;
  ready[1].numa_node = 1;
  for (ReadyMessage& m : ready) m.ok = 1;
  ready[0].doorbell_port = 40000;
  const std::string r = PlanReport(wall, o, plan, ready, 4);
  EXPECT_THAT(r, HasSubstr("streamer: 2x1 wall of"));
  EXPECT_THAT(r, HasSubstr("playing"));
  EXPECT_THAT(r, HasSubstr("tile r0c0   rank 1   -> 127.0.0.1:"));
  EXPECT_THAT(r, HasSubstr("nic default  GSO\n")) << "a tile whose rank has a doorbell";
  EXPECT_THAT(r, HasSubstr("nic default (NUMA 1)  sendmmsg  ticks polled (no doorbell)\n"));
  EXPECT_THAT(r, HasSubstr("ranks 2..3 spare: more ranks than tiles + 1"));
}

}  // namespace
}  // namespace tilestream
