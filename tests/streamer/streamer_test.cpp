// The streamer end to end on loopback: mpirun, a 2x2 wall of small tiles
// from a synthetic store, and a test receiver per tile built from the common
// parser. Every tile's frames must arrive pixel-exact, with gapless
// sequence numbers, one marker per frame on its last packet, and the same
// timestamp on every tile for the same tick.
#include "tests/streamer/streamer_fixture.h"

namespace tilestream {
namespace {

TEST_F(StreamerTest, SpawnedTileRanksStreamEveryFramePixelExact) { StreamAndCheck(1); }

TEST_F(StreamerTest, StaticTileRanksStreamEveryFramePixelExact) { StreamAndCheck(5); }

// Fewer ranks than tiles + 1: a rank streams several tiles in one pacing
// loop (streamer/rank_plan.h); 2 ranks is what `mpirun streamer` starts on
// a 2-core machine.
TEST_F(StreamerTest, OneRankStreamingEveryTileSendsEveryFramePixelExact) { StreamAndCheck(2); }

TEST_F(StreamerTest, TwoRanksSharingTheTilesSendEveryFramePixelExact) { StreamAndCheck(3); }

TEST_F(StreamerTest, RanksPastTilesPlusOneStaySpareAndTheWallPlays) {
  StreamAndCheck(7);
  EXPECT_THAT(output_, HasSubstr("ranks 5..6 spare"));
}

TEST_F(StreamerTest, BenchmarkFromDiskWithARankPerTileSendsTheStoresFrames) {
  BenchAndCheck(5, "", true);
}

TEST_F(StreamerTest, BenchmarkFromDiskWithOneRankForEveryTileSendsTheStoresFrames) {
  BenchAndCheck(2, "", true);
}

TEST_F(StreamerTest, UnpacedBenchmarkFromMemoryKeepsEveryTileOfARankGoing) {
  BenchAndCheck(2, "--source memory --pacing off", false);
}

TEST_F(StreamerTest, MovieThatDoesNotMatchTheLayoutIsRefused) {
  const ProcessResult r =
      Shell(Mpirun(1) + kStreamer + " --layout 3x1 --movie " + movie() + " --ticks 1", dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("the movie is 2x2 tiles of 160x100, but the wall is 3x1 tiles"));
}

TEST_F(StreamerTest, UnknownNicIsRefused) {
  auto captures = StartCaptures();
  std::string config = WriteConfig(captures, "nic = \"eth9\"\n");
  const ProcessResult r =
      Shell(Mpirun(1) + kStreamer + " --config " + config + " --movie " + movie(), dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("unknown NIC 'eth9'"));
}

TEST_F(StreamerTest, TruncatedTileFileIsRefusedAtStart) {
  std::filesystem::resize_file(manifest_.TilePath(3), manifest_.frame_stride * 2);
  const ProcessResult r = Shell(Mpirun(1) + kStreamer + " --movie " + movie() + " --ticks 1", dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("tile r1c1"));
  EXPECT_THAT(r.output, HasSubstr("truncated or not this movie's file"));
}

TEST_F(StreamerTest, MissingMovieIsAClearError) {
  const ProcessResult r = Shell(Mpirun(1) + kStreamer + " --layout 2x2", dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("--movie DIR is required"));
}

TEST_F(StreamerTest, MissingReceiversNeverStopTheStream) {
  // Nothing listens on these ports: ICMP port unreachable comes back.
  std::vector<std::unique_ptr<TileCapture>> none;
  const std::string config = dir_ / "nobody.toml";
  std::ofstream(config)
      << "[wall]\ncolumns = 2\nrows = 2\ntile_width = 160\ntile_height = 100\nfps = 25\n"
         "[stream]\nport_base = 59990\n";
  const ProcessResult r = Shell(Mpirun(1) + kStreamer + " --config " + config + " --movie " +
                                    movie() + " --ticks 10 --json " + (dir_ / "report.json"),
                                dir_);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("send errors (ECONNREFUSED "));  // ICMP: receiver gone
  std::ifstream in(dir_ / "report.json");
  std::stringstream json;
  json << in.rdbuf();
  EXPECT_THAT(json.str(), HasSubstr("\"frames\": 40"));  // 4 tiles x 10 ticks, all sent
}

// Paused, a tile rank has nothing to do but repeat its frame twice a second
// and send its heartbeat four times: it sleeps on its doorbell until then
// (streamer/doorbell.h). Polling MPI for the tick, as it did before, it
// woke about 500 times a second; the coordinator wakes 20 times a second
// for its health checks.
TEST_F(StreamerTest, APausedWallsRanksSleepInsteadOfPollingForTheNextTick) {
  auto captures = StartCaptures();
  const std::string config = dir_ / "wall.toml";
  StopsWithAFinalReport(Launcher("", captures), SIGINT, true, captures, dir_ / "run.txt", [&] {
    const ProcessResult r = Shell(kWallctl + " --config " + config + " pause", dir_);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ASSERT_THAT(r.output, HasSubstr("\"paused\""));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the frame under way goes out
    const std::vector<int> ranks = RanksWith(config);
    ASSERT_EQ(ranks.size(), 5u) << "the coordinator and 4 spawned tile ranks";
    std::vector<uint64_t> before;
    for (int pid : ranks) before.push_back(MainThreadWakeUps(pid));
    const auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::seconds(2));  // the window the rate is taken over
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (size_t i = 0; i < ranks.size(); ++i) {
      const double per_second =
          static_cast<double>(MainThreadWakeUps(ranks[i]) - before[i]) / seconds;
      EXPECT_LT(per_second, 100) << "process " << ranks[i] << " of the paused wall";
    }
  });
}

// The coordinator's frame clock runs at SCHED_FIFO where that is permitted
// (root, here), so that on a busy server its ticks do not wait behind the
// tile ranks; nothing else does: not its other threads, not a tile rank.
// Its final report says so.
TEST_F(StreamerTest, OnlyTheFrameClockRunsRealTime) {
  if (geteuid() != 0) GTEST_SKIP() << "SCHED_FIFO needs root or CAP_SYS_NICE";
  auto captures = StartCaptures();
  const std::string config = dir_ / "wall.toml";
  const std::string json = dir_ / "final.json";
  StopsWithAFinalReport(
      Launcher("-n 5 --json " + json, captures), SIGINT, true, captures, dir_ / "run.txt", [&] {
        const std::vector<int> ranks = RanksWith(config);
        ASSERT_EQ(ranks.size(), 5u) << "the coordinator and 4 tile ranks";
        for (int pid : ranks) {
          const std::vector<int> policies = testing::ThreadPolicies(pid);
          const bool coordinator = RankOf(pid) == 0;
          EXPECT_EQ(policies[0], coordinator ? SCHED_FIFO : SCHED_OTHER) << "rank " << RankOf(pid);
          EXPECT_EQ(std::count(policies.begin() + 1, policies.end(), SCHED_OTHER),
                    policies.size() - 1)
              << "another thread of rank " << RankOf(pid) << " runs real-time";
        }
      });
  const auto report = nlohmann::json::parse(std::ifstream(json));
  EXPECT_TRUE(report["ticks"]["real_time"].get<bool>()) << report.dump();
}

// A firewall that drops the doorbell's rings (UDP of 8 bytes, as nftables
// tells them apart on lo): each tile rank notices after 10 ticks taken
// without one, says so, polls from then on, and every frame still arrives.
TEST_F(StreamerTest, RingsThatNeverComeLeaveTheRanksPollingAndEveryFrameWhole) {
  if (getuid() != 0 || system("command -v nft >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "needs root and nft to drop the rings";
  const std::string table = "tsdoorbell";
  Shell("nft delete table netdev " + table + " 2>/dev/null", dir_);
  const auto drop = Shell("nft 'add table netdev " + table + "; add chain netdev " + table +
                              " rings { type filter hook ingress device \"lo\" priority 0; }; "
                              "add rule netdev " +
                              table + " rings udp length 16 counter drop'",
                          dir_);
  struct Removed {  // whatever happens, later tests get their rings
    const TempDir& dir;
    ~Removed() { Shell("nft delete table netdev tsdoorbell", dir); }
  } removed{dir_};
  ASSERT_EQ(drop.exit_code, 0) << drop.output;
  StreamAndCheck(1, /*byes=*/0);  // 8-byte datagrams too: the rule drops them
  const std::string counted = Shell("nft list table netdev " + table, dir_).output;
  EXPECT_EQ(counted.find("counter packets 0 "), std::string::npos) << "no ring was dropped";
  EXPECT_THAT(output_, HasSubstr("10 ticks came but no doorbell ring"));
}

// A tile rank that cannot keep up (stopped most of each tick, as a rank
// starved of CPU is) makes the coordinator drop ticks for the whole wall
// (common/control/tick_shedder.h): a tick it drops is missing on every
// tile, so the ticks it sends can arrive whole everywhere.
TEST_F(StreamerTest, AStarvedTileRankMakesTheWallDropTheSameTicksOnEveryTile) {
  auto captures = StartCaptures();
  const std::string out = dir_ / "run.txt", json = dir_ / "run.json";
  MidStreamJob job =
      StartMidStream(Launcher("-n 5", captures) + " --duration 120 --json " + json, out, 5);
  ASSERT_GE(job.pid, 0);
  JobGuard guard{job.pid};
  ASSERT_EQ(job.mpirun.size(), 1u);
  const auto tile_rank =
      std::find_if(job.ranks.begin(), job.ranks.end(), [](int p) { return RankOf(p) == 4; });
  ASSERT_NE(tile_rank, job.ranks.end());
  // The coordinator looks once a second; under load give it a minute.
  const std::string shedding = "the same on every tile";
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!testing::FileContains(out, shedding) && std::chrono::steady_clock::now() < give_up) {
    kill(*tile_rank, SIGSTOP);  // the starving itself, not a wait: 3 of each 4 ticks (40 ms)
    std::this_thread::sleep_for(std::chrono::milliseconds(120));
    kill(*tile_rank, SIGCONT);
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
  }
  kill(*tile_rank, SIGCONT);
  const size_t before = captures[0]->frame_count();
  testing::WaitFor([&] { return captures[0]->frame_count() >= before + 10; });
  kill(-job.pid, SIGINT);  // Ctrl-C: the final report and JSON
  int status = 0;
  const bool exited = ExitsWithinAMinute(job.pid, &status);
  if (!exited)  // leave nothing to the next test: the ranks are in mpirun's session
    for (int p : InSession(job.mpirun[0])) kill(p, SIGKILL);
  for (auto& c : captures) c->Stop();
  const std::string text = testing::FileText(out);
  ASSERT_TRUE(exited) << text;
  ASSERT_THAT(text, HasSubstr(shedding));
  const auto j = nlohmann::json::parse(testing::FileText(json), nullptr, false);
  ASSERT_TRUE(j.is_object() && j.contains("ticks")) << text;
  const uint64_t shed = j["ticks"]["shed"].get<uint64_t>();
  EXPECT_GE(shed, 1u) << j["ticks"].dump();
  EXPECT_GE(j["ticks"]["shed_cuts"].get<uint64_t>(), 1u);
  // Ticks step by 90000 / 25 = 3600: a tick no tile has is one dropped for
  // all (or, on a stalled machine, skipped by every rank at once).
  // Counted from one tile's first timestamp, as signed steps: the 32-bit
  // timestamp may wrap during the run.
  std::set<int64_t> any_tile;
  const uint32_t origin = captures[0]->frames().begin()->first;
  for (auto& c : captures)
    for (const auto& [ts, f] : c->frames())
      any_tile.insert(static_cast<int32_t>(ts - origin) / 3600);
  ASSERT_GE(any_tile.size(), 2u);
  const int64_t span = *any_tile.rbegin() - *any_tile.begin() + 1;
  EXPECT_GE(span - static_cast<int64_t>(any_tile.size()), 1)
      << "no tick is missing on every tile; " << shed << " shed";
}

}  // namespace
}  // namespace tilestream
