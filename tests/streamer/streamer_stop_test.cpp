// Stopping the streamer (Ctrl-C through the launcher, SIGTERM to mpirun, the
// whole job stopped for seconds) and a tile's disk failing while it streams:
// every rank ends with a final report, or the tile holds its last frame.
#include "tests/streamer/streamer_fixture.h"

namespace tilestream {
namespace {

// Ctrl-C in the terminal: SIGINT to the launcher script, which signals the
// ranks directly.
TEST_F(StreamerTest, CtrlCThroughTheLauncherStopsEveryRankWithAFinalReport) {
  auto captures = StartCaptures();
  const std::string command = Launcher("", captures);
  StopsWithAFinalReport(command, SIGINT, true, captures, dir_ / "run.txt");
}

// `kill` of mpirun (systemd, a script): mpirun forwards SIGTERM to the ranks.
TEST_F(StreamerTest, SigtermToMpirunStopsEveryRankWithAFinalReport) {
  auto captures = StartCaptures();
  const std::string command = kMpirun + " -n 1 --oversubscribe " + kStreamer + " --config " +
                              WriteConfig(captures) + " --movie " + movie();
  StopsWithAFinalReport(command, SIGTERM, false, captures, dir_ / "run.txt");
}

TEST_F(StreamerTest, ReadErrorWhileStreamingIsReportedOnceAndTheTileHoldsItsLastFrame) {
  ExpectTheTileHoldsItsLastFrameAfter(
      [&] { std::filesystem::resize_file(manifest_.TilePath(3), manifest_.frame_stride * 2); },
      "truncated");
}

// A disk that fails under the stream: tile r1c1's file lives on a loop
// device whose capacity is then cut, so O_DIRECT reads get EIO from the
// block layer, as from a dead SSD. Root only (losetup, mount).
TEST_F(StreamerTest, ADiskThatFailsWhileStreamingIsReportedOnceAndTheTileHoldsItsLastFrame) {
  if (geteuid() != 0 || system("command -v losetup mkfs.ext4 >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "needs root, losetup and mkfs.ext4";
  const std::string image = dir_ / "disk.img", mount_point = dir_ / "disk";
  std::filesystem::create_directory(mount_point);
  {
    std::ofstream(image).close();
    std::filesystem::resize_file(image, 32 << 20);
  }
  FILE* p = popen(("losetup -f --show " + image + " 2>/dev/null").c_str(), "r");
  char device[64] = {};
  const bool attached = p && fgets(device, sizeof device, p) != nullptr;
  if (p) pclose(p);
  if (!attached) GTEST_SKIP() << "no loop device free";
  std::string loop = device;
  loop.erase(loop.find_last_not_of('\n') + 1);
  struct Detach {
    std::string loop, mount_point;
    ~Detach() {
      (void)!system(("umount -l " + mount_point + " 2>/dev/null; losetup -d " + loop).c_str());
    }
  } detach{loop, mount_point};
  ASSERT_EQ(system(("mkfs.ext4 -q " + loop + " && mount " + loop + " " + mount_point).c_str()), 0);
  // Tile r1c1's file moves onto the disk; the manifest names it there.
  const std::string moved = mount_point + "/tile_r1_c1.rgb";
  std::filesystem::copy_file(manifest_.TilePath(3), moved);
  std::filesystem::remove(manifest_.TilePath(3));
  MovieManifest moved_manifest = manifest_;
  moved_manifest.tile_files[3] = moved;
  std::ofstream(movie() + "/movie.toml") << ManifestToToml(moved_manifest);
  ASSERT_EQ(system("sync"), 0);
  ASSERT_TRUE(OpenTileStore(movie()).ok());
  ExpectTheTileHoldsItsLastFrameAfter(
      [&] { ASSERT_EQ(system(("truncate -s 1M " + image + " && losetup -c " + loop).c_str()), 0); },
      "Input/output error");
}

// A machine that stops for 6 s (a stalled virtual machine: seen on a
// 16-core one, when every tile rank called the live coordinator gone)
// stops every rank at once. None may call another gone for the time it did
// not run itself: the wall plays on to the end of its run.
TEST_F(StreamerTest, AJobStoppedWholeForSixSecondsPlaysOnAfterwards) {
  auto captures = StartCaptures();
  const std::string out = dir_ / "run.txt";
  MidStreamJob job = StartMidStream(Launcher("-n 5", captures) + " --duration 16", out, 5);
  ASSERT_GE(job.pid, 0);
  JobGuard guard{job.pid};
  ASSERT_EQ(job.mpirun.size(), 1u);
  job.ranks.push_back(job.mpirun[0]);
  for (int p : job.ranks) kill(p, SIGSTOP);
  std::this_thread::sleep_for(std::chrono::seconds(6));  // the stall itself, not a wait
  for (int p : job.ranks) kill(p, SIGCONT);
  int status = 0;
  const bool exited = ExitsWithinAMinute(job.pid, &status);
  if (!exited)  // leave nothing to the next test: the ranks are in mpirun's session
    for (int p : InSession(job.mpirun[0])) kill(p, SIGKILL);
  ASSERT_TRUE(exited) << "the job hung\n" << testing::FileText(out);
  const std::string text = testing::FileText(out);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << text;
  EXPECT_THAT(text, Not(HasSubstr("no word from the coordinator")));
  EXPECT_THAT(text, Not(HasSubstr("stopped responding")));
}

}  // namespace
}  // namespace tilestream
