// A rank that dies mid-stream (a tile rank, the coordinator, under a hung
// mpirun): the job ends by itself, names what died, and leaves no process.
#include "tests/streamer/streamer_fixture.h"

namespace tilestream {
namespace {

TEST_F(StreamerTest, DeadTileRankEndsASpawnedJobNamingTheTile) {
  auto captures = StartCaptures();
  DeadRankEndsTheJob(Launcher("", captures), dir_ / "run.txt", Victim::kTileRank, kTileDied);
}

TEST_F(StreamerTest, DeadTileRankEndsAStaticJobNamingTheTile) {
  auto captures = StartCaptures();
  DeadRankEndsTheJob(Launcher("-n 5", captures), dir_ / "run.txt", Victim::kTileRank, kTileDied);
}

// A rank streaming two tiles: both are named.
TEST_F(StreamerTest, DeadRankOfSeveralTilesEndsTheJobNamingThemAll) {
  auto captures = StartCaptures();
  DeadRankEndsTheJob(Launcher("-n 3", captures), dir_ / "run.txt", Victim::kTileRank,
                     "tiles r[01]c[01], r[01]c[01] \\(rank 2\\) (died|stopped responding)", 3);
}

// An mpirun that does not end the job after a rank died (here stopped, so
// it passes on no word of the ranks either): the launcher ends the job
// itself and names the tile from the plan it had printed.
TEST_F(StreamerTest, DeadTileRankUnderAHungMpirunIsEndedByTheLauncher) {
  auto captures = StartCaptures();
  DeadRankEndsTheJob(  // after 3 s, not the 15 an operator gets: the same code path
      "env STREAMER_STUCK_S=3 " + Launcher("-n 5", captures), dir_ / "run.txt", Victim::kTileRank,
      "mpirun did not end the job 3 s after rank [1-4] died; ended it\n.*" + kTileDied, 5, true);
}

// Nothing of a job outlives its launcher, not even what is not mpirun's
// child and so is not killed with it (seen in CI: four processes of the
// job still there 200 ms after the launcher exited). Here every rank
// leaves a process of its own behind.
TEST_F(StreamerTest, ProcessesTheRanksLeaveBehindEndWithTheLauncher) {
  auto captures = StartCaptures();
  const std::string streamer = dir_ / "streamer-leaving-a-process";
  std::ofstream(streamer) << "#!/bin/sh\n"
                          << "if [ -n \"${OMPI_COMM_WORLD_RANK:-}\" ]; then\n"
                          << "  sleep 600 < /dev/null > /dev/null 2>&1 &\n"
                          << "fi\n"
                          << "exec " << kStreamer << " \"$@\"\n";
  std::filesystem::permissions(streamer, std::filesystem::perms::owner_all);
  DeadRankEndsTheJob(Launcher("-n 5", captures, streamer), dir_ / "run.txt", Victim::kTileRank,
                     kTileDied);
}

// kill -9 of the coordinator: the tile ranks do not stream on without a
// clock, nor wait for one forever.
TEST_F(StreamerTest, DeadCoordinatorEndsASpawnedJob) {
  auto captures = StartCaptures();
  DeadRankEndsTheJob(Launcher("", captures), dir_ / "run.txt", Victim::kCoordinator,
                     kCoordinatorDied);
}

TEST_F(StreamerTest, DeadCoordinatorEndsAStaticJob) {
  auto captures = StartCaptures();
  DeadRankEndsTheJob(Launcher("-n 5", captures), dir_ / "run.txt", Victim::kCoordinator,
                     kCoordinatorDied);
}

}  // namespace
}  // namespace tilestream
