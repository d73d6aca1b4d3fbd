#include "streamer/wall_status.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/control/control_commands.h"
#include "common/control/playback.h"
#include "tests/streamer/wall_state.h"

namespace tilestream {
namespace {

using testing::WallState;

TEST(WallStatus, NamesEveryTileWithItsRankAndNicBeforeAnySecondIsCounted) {
  const WallState w;
  nlohmann::json j;
  AddWallStatus(w.View(1), &j);
  ASSERT_EQ(j["tiles"].size(), 2u);
  EXPECT_EQ(j["tiles"][0]["tile"], "r0c0");
  EXPECT_EQ(j["tiles"][1]["tile"], "r0c1");
  EXPECT_EQ(j["tiles"][0]["rank"], 1);
  EXPECT_EQ(j["tiles"][1]["rank"], 2);
  EXPECT_EQ(j["tiles"][0]["nic"], "default");
  EXPECT_EQ(j["tiles"][0]["node"], "localhost");
  EXPECT_FALSE(j["tiles"][0].contains("gbps"));
  EXPECT_FALSE(j["tiles"][0].contains("receiver"));
  EXPECT_EQ(j["sync"]["enabled"], w.config.sync.enabled);
  EXPECT_EQ(j["sync"]["nodes"], 1);
  EXPECT_EQ(j["sync"]["shown"], 0);
  EXPECT_EQ(j["sync"]["decided_by"], "server");
}

TEST(WallStatus, AddsTheSendersLastSecondAndWhatTheReceiverReported) {
  WallState w;
  w.last_second.resize(2);
  w.last_second[1].mbps = 2500;
  w.last_second[1].disk_mbytes_per_s = 310;
  w.latest[1].send_errors = 3;
  w.latest[1].late_frames = 2;
  w.receivers[1] = {true, {30, 7, 1, 21'500, 1'250, 40, 2}};
  w.latency_ns = 84'000'000;
  w.node_rtt = {{20'000'000, 1'000'000, 3}};
  w.leader = 0;
  nlohmann::json j;
  AddWallStatus(w.View(0), &j);
  EXPECT_DOUBLE_EQ(j["sync"]["latency_ms"].get<double>(), 84);
  EXPECT_EQ(j["sync"]["decided_by"], "localhost");  // the node that decides the ticks
  EXPECT_DOUBLE_EQ(j["sync"]["nodes_rtt"]["localhost"]["rtt_ms"].get<double>(), 20);
  EXPECT_DOUBLE_EQ(j["sync"]["nodes_rtt"]["localhost"]["jitter_ms"].get<double>(), 1);
  const nlohmann::json& tile = j["tiles"][1];
  EXPECT_DOUBLE_EQ(tile["gbps"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(tile["disk_mbytes_per_s"].get<double>(), 310);
  EXPECT_EQ(tile["send_errors"], 3);
  EXPECT_EQ(tile["late_frames"], 2);
  EXPECT_EQ(tile["receiver"]["fps"], 30);
  EXPECT_EQ(tile["receiver"]["lost"], 7);
  EXPECT_EQ(tile["receiver"]["incomplete"], 1);
  EXPECT_DOUBLE_EQ(tile["receiver"]["rtt_ms"].get<double>(), 21.5);
  EXPECT_DOUBLE_EQ(tile["receiver"]["jitter_ms"].get<double>(), 1.25);
  EXPECT_EQ(tile["receiver"]["requested"], 40);
  EXPECT_EQ(tile["receiver"]["late_retransmissions"], 2);
  EXPECT_FALSE(j["tiles"][0].contains("receiver"));
}

// The command handler as the coordinator wires it: a line in, a JSON line
// out, the wall's status beside the playback state.
TEST(WallStatus, TheStatusCommandAnswersWithThePlaybackAndTheWall) {
  const WallState w;
  Playback playback(100, 30, {});
  ControlCommands commands([&w](nlohmann::json* j) { AddWallStatus(w.View(2), j); });
  commands.set_playback(&playback);
  commands.set_tick(41);
  const nlohmann::json j = nlohmann::json::parse(commands.Handle("status"));
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["tick"], 41);
  EXPECT_EQ(j["tiles"].size(), 2u);
  EXPECT_EQ(j["sync"]["nodes"], 2);
  const nlohmann::json paused = nlohmann::json::parse(commands.Handle("pause"));
  EXPECT_EQ(paused["state"], "paused");
  EXPECT_FALSE(paused.contains("tiles"));  // only status carries the wall
}

}  // namespace
}  // namespace tilestream
