// The streamer end to end on loopback: mpirun, a 2x2 wall of small tiles
// from a synthetic store, and a test receiver per tile built from the common
// parser. Every tile's frames must arrive pixel-exact, with gapless
// sequence numbers, one marker per frame on its last packet, and the same
// timestamp on every tile for the same tick.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "built_paths.h"
#include "common/store/tile_store.h"
#include "common/wire/sdp.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"
#include "tests/support/thread_policy.h"
#include "tests/support/tile_capture.h"
#include "tests/support/wait_for.h"
#include "tools/wallcut/frame_source.h"
#include "tools/wallcut/movie_cutter.h"
#include "tools/wallcut/wall_cutter.h"

namespace tilestream {
namespace {

using ::testing::HasSubstr;
using testing::ProcessResult;
using testing::Shell;
using testing::TempDir;
using testing::TileCapture;

const std::string kStreamer = STREAMER_PATH;
const std::string kMpirun = MPIRUN_PATH;
const std::string kWallctl = WALLCTL_PATH;
constexpr uint64_t kFrames = 8;
constexpr uint64_t kTicks = 20;  // more than the movie: it loops
constexpr double kFps = 25;

WallSettings TestWall() {
  WallSettings w;
  w.layout = {2, 2};
  w.tile = {160, 100};
  w.bezel_x = 8;
  w.bezel_y = 4;
  w.fps = kFps;
  return w;
}

std::string Mpirun(int ranks) {
  return "timeout 120 " + kMpirun + " -n " + std::to_string(ranks) + " --oversubscribe ";
}

class StreamerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    // Open MPI keeps its own allocations to exit; our leaks are checked by
    // the unit tests.
    setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
  }

  void SetUp() override {
    auto source = MakeSyntheticSource(TestWall(), kFrames, 5, true);
    ASSERT_TRUE(source.ok());
    CutOptions o;
    o.wall = TestWall();
    o.out_dir = movie();
    o.progress = false;
    ASSERT_TRUE(CutMovie(**source, o).ok());
    auto m = OpenTileStore(movie());
    ASSERT_TRUE(m.ok());
    manifest_ = *m;
  }

  std::string movie() const { return dir_ / "movie"; }

  // A wall config sending tile i to captures[i]'s port.
  std::string WriteConfig(const std::vector<std::unique_ptr<TileCapture>>& captures,
                          const std::string& extra = "") {
    std::string ports;
    for (const auto& c : captures) ports += (ports.empty() ? "" : ", ") + std::to_string(c->port());
    std::string path = dir_ / "wall.toml";
    std::ofstream(path)
        << "[wall]\ncolumns = 2\nrows = 2\ntile_width = 160\ntile_height = 100\nbezel_x = 8\n"
           "bezel_y = 4\nfps = 25\n\n[stream]\nmtu = 1500\n\n"
           "[sync]\nwait_ms = 0  # the test captures take no part in swap sync\n\n[[node]]\nname = "
           "\"local\"\n"
           "address = \"127.0.0.1\"\ntiles = [\"r0c0\", \"r0c1\", \"r1c0\", \"r1c1\"]\nports = ["
        << ports << "]\n"
        << extra;
    return path;
  }

  std::vector<std::unique_ptr<TileCapture>> StartCaptures() {
    std::vector<std::unique_ptr<TileCapture>> captures;
    for (int t = 0; t < 4; ++t) {
      captures.push_back(std::make_unique<TileCapture>(TestWall().tile));
      EXPECT_TRUE(captures.back()->ok());
      captures.back()->Start();
    }
    return captures;
  }

  std::vector<std::byte> StoreFrame(uint32_t tile, uint64_t frame) {
    auto reader = TileReader::Open(manifest_, tile, false);
    std::vector<std::byte> buffer(manifest_.frame_stride);
    EXPECT_TRUE(reader->ReadFrame(frame, buffer).ok());
    buffer.resize(manifest_.tile.frame_bytes());
    return buffer;
  }

  // Streams kTicks ticks with `ranks` MPI ranks and checks what arrived.
  // `byes`: the RTCP BYEs each tile's stream ends with (two, unless a test
  // drops them).
  void StreamAndCheck(int ranks, size_t byes = 2) {
    auto captures = StartCaptures();
    const std::string config = WriteConfig(captures);
    const ProcessResult r =
        Shell(Mpirun(ranks) + kStreamer + " --config " + config + " --movie " + movie() +
                  " --ticks " + std::to_string(kTicks) + " --sdp-dir " + (dir_ / "sdp"),
              dir_);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    for (auto& c : captures) c->Stop();
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("final report"));
    output_ = r.output;

    // Tick k carries timestamp base + k * 90000 / 25; the first frame any
    // tile sent is tick 0. Every frame a rank sent arrives whole; a tick a
    // rank the loaded machine held up skipped (counted in its final
    // report) sends nothing, on that tile only.
    uint32_t base = UINT32_MAX;
    bool any_skipped = false;
    for (uint32_t t = 0; t < 4; ++t) {
      ASSERT_FALSE(captures[t]->frames().empty()) << "tile " << t << "\n" << r.output;
      base = std::min(base, captures[t]->frames().begin()->first);
    }
    std::set<uint32_t> timestamps_of_tile0;
    for (uint32_t t = 0; t < 4; ++t) {
      const auto& frames = captures[t]->frames();
      EXPECT_EQ(captures[t]->malformed(), 0u);
      EXPECT_EQ(captures[t]->rtcp(), byes) << "the stream ends with a BYE, sent twice";
      std::smatch m;
      const std::string name = TileId::FromIndex(t, {2, 2}).Name();
      ASSERT_TRUE(std::regex_search(
          r.output, m,
          std::regex("tile " + name +
                     " .* frames ([0-9]+) \\([0-9]+ late, ([0-9]+) skipped, ([0-9]+) missed\\)")))
          << r.output;
      const uint64_t sent = std::stoull(m[1]), skipped = std::stoull(m[2]),
                     missed = std::stoull(m[3]);
      any_skipped = any_skipped || skipped + missed > 0;
      ASSERT_EQ(frames.size(), sent) << "tile " << t << "\n" << r.output;
      EXPECT_GE(sent + skipped + missed, kTicks) << "tile " << t << "\n" << r.output;
      std::vector<uint32_t> all_sequences;
      for (const auto& [ts, f] : frames) {
        const uint32_t tick = (ts - base) / 3600;
        ASSERT_EQ((ts - base) % 3600, 0u) << "timestamps step by 90000 / fps";
        ASSERT_LT(tick, kTicks);
        EXPECT_EQ(f.ssrc, TileSsrc(t));
        EXPECT_EQ(f.bytes, TestWall().tile.frame_bytes())
            << "tile " << t << " tick " << tick << " incomplete";
        EXPECT_EQ(f.markers, 1);
        EXPECT_EQ(f.marker_sequence, *std::max_element(f.sequences.begin(), f.sequences.end()));
        EXPECT_TRUE(f.pixels == StoreFrame(t, tick % kFrames)) << "tile " << t << " tick " << tick;
        all_sequences.insert(all_sequences.end(), f.sequences.begin(), f.sequences.end());
        if (t == 0) {
          timestamps_of_tile0.insert(ts);
        } else if (!any_skipped) {
          EXPECT_TRUE(timestamps_of_tile0.count(ts))
              << "tile " << t << " has a timestamp tile 0 lacks";
        }
      }
      std::sort(all_sequences.begin(), all_sequences.end());
      for (size_t i = 0; i < all_sequences.size(); ++i)
        ASSERT_EQ(all_sequences[i], i) << "tile " << t << ": gap or duplicate in the sequence";
    }

    // One SDP file per tile that parses back to the tile's geometry and port.
    for (uint32_t t = 0; t < 4; ++t) {
      const std::string name = TileId::FromIndex(t, {2, 2}).Name();
      std::ifstream in(dir_ / ("sdp/tile_" + name + ".sdp"));
      std::stringstream text;
      text << in.rdbuf();
      auto d = ParseSdp(text.str());
      ASSERT_TRUE(d.ok()) << name << ": " << d.status().message();
      EXPECT_EQ(d->tile, TestWall().tile);
      EXPECT_EQ(d->port, captures[t]->port());
      EXPECT_EQ(d->ssrc, TileSsrc(t));
    }
  }

  void BenchAndCheck(int ranks, const std::string& flags, bool check_frames);
  void ExpectTheTileHoldsItsLastFrameAfter(const std::function<void()>& fault,
                                           const std::string& said);
  std::string Launcher(const std::string& ranks,
                       const std::vector<std::unique_ptr<TileCapture>>& captures,
                       const std::string& streamer = kStreamer);

  TempDir dir_;
  MovieManifest manifest_;
  std::string output_;  // of the last StreamAndCheck
};

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

// Benchmark mode: every tile sends on its own schedule until --duration,
// whatever the rank count (a rank streaming several tiles keeps each going),
// from the disk ring by default. Paced, every frame arrives whole and is the
// store's frame of its timestamp.
void StreamerTest::BenchAndCheck(int ranks, const std::string& flags, bool check_frames) {
  auto captures = StartCaptures();
  const std::string json = dir_ / "bench.json";
  const ProcessResult r =
      Shell(Mpirun(ranks) + kStreamer + " --config " + WriteConfig(captures) + " --movie " +
                movie() + " --bench --duration 3 --json " + json + " " + flags,
            dir_);
  std::ifstream in(json);
  const auto j = nlohmann::json::parse(in, nullptr, false);
  if (check_frames && j.is_object() && j["streams"].size() == 4u) {
    // Paced: every datagram sent is on its way to the capture.
    testing::WaitFor(
        [&] {
          for (uint32_t t = 0; t < 4; ++t)
            if (captures[t]->packet_count() < j["streams"][t]["packets"].get<size_t>())
              return false;
          return true;
        },
        std::chrono::seconds(10));
  }
  for (auto& c : captures) c->Stop();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(j.is_object()) << r.output;
  EXPECT_GE(j["duration_s"].get<double>(), 2.5) << r.output;
  ASSERT_EQ(j["streams"].size(), 4u);
  for (const auto& s : j["streams"]) {
    // 25 fps paced for 3 s is 75 frames; a loaded machine may give fewer.
    EXPECT_GE(s["frames"].get<uint64_t>(), 25u) << s.dump();
    EXPECT_EQ(s["missed_frames"].get<uint64_t>(), 0u) << s.dump();
  }
  if (!check_frames) return;
  for (uint32_t t = 0; t < 4; ++t) {
    EXPECT_GE(captures[t]->frames().size(), 25u) << "tile " << t;
    for (const auto& [ts, f] : captures[t]->frames()) {
      // Bench timestamps count frames from 0 at 90 kHz / 25 fps.
      ASSERT_EQ(ts % 3600, 0u);
      EXPECT_EQ(f.bytes, TestWall().tile.frame_bytes()) << "tile " << t << " ts " << ts;
      EXPECT_TRUE(f.pixels == StoreFrame(t, (ts / 3600) % kFrames)) << "tile " << t << " ts " << ts;
    }
  }
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

// Children of `pid`, optionally only those whose command line matches `name`.
std::vector<int> Children(int pid, const std::string& name = "") {
  std::vector<int> pids;
  FILE* p =
      popen(("pgrep -P " + std::to_string(pid) + (name.empty() ? "" : " -f " + name)).c_str(), "r");
  for (int child; p && fscanf(p, "%d", &child) == 1;) pids.push_back(child);
  if (p) pclose(p);
  return pids;
}

// Whatever happens in a test, the job it started ends with it: mpirun runs
// in a session of its own under the launcher, so its group is killed too.
struct JobGuard {
  pid_t pid;
  ~JobGuard() {
    for (int m : Children(pid, "mpirun")) {
      kill(-m, SIGKILL);
      kill(m, SIGKILL);
    }
    kill(-pid, SIGKILL);
    waitpid(pid, nullptr, WNOHANG);
  }
};

// Starts `command` in a process group of its own, as a terminal runs a
// foreground job, lets it stream for 3 s once every tile streams, sends `signal` (to the whole
// group if `to_group`, as Ctrl-C does), and expects every rank to stop with a final report.
std::string StopsWithAFinalReport(const std::string& command, int signal, bool to_group,
                                  const std::vector<std::unique_ptr<TileCapture>>& captures,
                                  const std::string& out,
                                  const std::function<void()>& meanwhile = nullptr) {
  const pid_t pid = fork();
  EXPECT_GE(pid, 0);
  if (pid == 0) {
    setpgid(0, 0);
    for (int s : {SIGINT, SIGTERM}) ::signal(s, SIG_DFL);
    execl("/bin/sh", "sh", "-c", ("exec " + command + " > " + out + " 2>&1").c_str(), nullptr);
    _exit(127);
  }
  setpgid(pid, pid);
  JobGuard guard{pid};
  // Streaming on every tile (startup under load takes seconds), then 1.5 s.
  for (int waited = 0; waited < 600; ++waited) {
    bool all = true;
    for (auto& c : captures) all = all && c->frame_count() >= 5;
    if (all) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  if (meanwhile) meanwhile();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  kill(to_group ? -pid : pid, signal);
  int status = 0;
  bool exited = false;
  for (int waited = 0; !exited && waited < 200; ++waited) {
    exited = waitpid(pid, &status, WNOHANG) == pid;
    if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!exited) {  // never leave a job behind
    kill(-pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  for (auto& c : captures) c->Stop();
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_TRUE(exited);
  EXPECT_THAT(text.str(), HasSubstr("final report"));
  EXPECT_THAT(text.str(), HasSubstr("total  4  streams"));
  for (auto& c : captures) EXPECT_GT(c->frames().size(), 10u);  // it had been streaming
  return text.str();
}

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

// A read error on one tile's file while streaming (`fault` makes it): that
// tile reports it once (`said`) and keeps sending its last frame; the others
// are untouched.
void StreamerTest::ExpectTheTileHoldsItsLastFrameAfter(const std::function<void()>& fault,
                                                       const std::string& said) {
  auto captures = StartCaptures();
  const std::string command = Launcher("", captures);
  size_t frames_before = 0;
  const std::string out =
      StopsWithAFinalReport(command, SIGINT, true, captures, dir_ / "run.txt", [&] {
        fault();
        frames_before = captures[3]->frame_count();
      });
  const std::string message = "tile r1c1: reading the tile store:";
  EXPECT_THAT(out, HasSubstr(message));
  EXPECT_THAT(out, HasSubstr(said));
  EXPECT_EQ(out.find(message), out.rfind(message)) << "reported more than once:\n" << out;
  EXPECT_THAT(out, HasSubstr("holding the last frame"));
  EXPECT_GT(captures[3]->frames().size(), frames_before + 20) << "tile r1c1 stopped sending";
  // After the error the tile repeats one picture: its last frames are equal.
  const auto& frames = captures[3]->frames();
  auto last = frames.rbegin();
  const auto& a = (last++)->second.pixels;
  const auto& b = (last++)->second.pixels;
  EXPECT_TRUE(a == b);
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

// Processes left in session `sid` (mpirun's, which the launcher makes a
// session leader), other than zombies.
std::vector<int> InSession(int sid) {
  std::vector<int> left;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream fields(stat.substr(paren + 2));
    char state = 0;
    int ppid = 0, pgrp = 0, session = 0;
    fields >> state >> ppid >> pgrp >> session;
    if (session == sid && state != 'Z') left.push_back(std::stoi(name));
  }
  return left;
}

// The MPI rank of `pid` in its own job (OMPI_COMM_WORLD_RANK), or -1.
int RankOf(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  for (std::string var; std::getline(in, var, '\0');)
    if (var.rfind("OMPI_COMM_WORLD_RANK=", 0) == 0) return std::stoi(var.substr(21));
  return -1;
}

enum class Victim { kTileRank, kCoordinator };

// A job started by `command` (output in `out`) in a process group of its
// own, once mid-stream: every tile listed (the job is ready) and at least
// `processes` ranks there; under load that takes longer than any fixed wait.
struct MidStreamJob {
  pid_t pid = -1;
  std::vector<int> mpirun, ranks;
};

MidStreamJob StartMidStream(const std::string& command, const std::string& out, size_t processes) {
  MidStreamJob job;
  job.pid = fork();
  if (job.pid == 0) {
    setpgid(0, 0);
    execl("/bin/sh", "sh", "-c", ("exec " + command + " > " + out + " 2>&1").c_str(), nullptr);
    _exit(127);
  }
  if (job.pid < 0) return job;
  testing::WaitFor([&] {
    job.mpirun = Children(job.pid, "mpirun");
    if (job.mpirun.size() == 1) job.ranks = Children(job.mpirun[0]);
    return job.ranks.size() >= processes && testing::FileContains(out, " -> ", 4);
  });
  return job;
}

// Waits up to 60 s ("within seconds", on a loaded machine) for the job's
// launcher to exit; its status in *status.
bool ExitsWithinAMinute(pid_t pid, int* status) {
  for (int waited = 0; waited < 1200; ++waited) {
    if (waitpid(pid, status, WNOHANG) == pid) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// kill -9 of a rank mid-stream: the job ends by itself within seconds, says
// what died (matching `said`), and leaves no process behind the moment its
// launcher exits. With `hung_mpirun`, mpirun is stopped first, so that the
// launcher has to end the job itself.
void DeadRankEndsTheJob(const std::string& command, const std::string& out, Victim victim,
                        const std::string& said, size_t processes = 5, bool hung_mpirun = false) {
  MidStreamJob job = StartMidStream(command, out, processes);
  ASSERT_GE(job.pid, 0);
  JobGuard guard{job.pid};
  ASSERT_EQ(job.mpirun.size(), 1u);
  ASSERT_GE(job.ranks.size(), processes);
  std::vector<int>& ranks = job.ranks;
  std::sort(ranks.begin(), ranks.end());
  int target = ranks.back();  // the newest: a tile rank
  if (victim ==
      Victim::kCoordinator) {  // rank 0 (a spawned job's tiles count from 0 too: the oldest)
    target = *std::find_if(ranks.begin(), ranks.end(), [](int r) { return RankOf(r) == 0; });
  }
  if (hung_mpirun) kill(job.mpirun[0], SIGSTOP);
  kill(target, SIGKILL);
  int status = 0;
  const bool exited = ExitsWithinAMinute(job.pid, &status);
  const std::vector<int> orphans = InSession(job.mpirun[0]);
  // Leave nothing to the next test, failed or not: the ranks are in
  // mpirun's session, out of reach of a kill of its process group.
  for (int p : InSession(job.mpirun[0])) kill(p, SIGKILL);
  if (!exited) {
    kill(-job.pid, SIGKILL);
    waitpid(job.pid, &status, 0);
  }
  const std::string text = testing::FileText(out);
  EXPECT_TRUE(exited) << "the job hung";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << text;
  EXPECT_THAT(text, ::testing::ContainsRegex(said)) << text;
  EXPECT_TRUE(orphans.empty()) << orphans.size() << " processes of the job are left, the first "
                               << orphans[0];
}

const std::string kTileDied = "tile r[01]c[01] \\(rank [1-4]\\) (died|stopped responding)";
const std::string kCoordinatorDied =
    "the coordinator \\(rank 0\\) died|no word from the coordinator; ending the job";

// The launcher (scripts/streamer.sh) with `ranks` ("" spawns the tiles) on
// this test's wall and movie.
std::string StreamerTest::Launcher(const std::string& ranks,
                                   const std::vector<std::unique_ptr<TileCapture>>& captures,
                                   const std::string& streamer) {
  return "env STREAMER=" + streamer + " " + TILESTREAM_SOURCE_DIR "/scripts/streamer.sh " + ranks +
         " --config " + WriteConfig(captures) + " --movie " + movie();
}

// Wake-ups of a process's main thread so far: the times it blocked.
uint64_t MainThreadWakeUps(int pid) {
  const std::string path =
      "/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/status";
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("voluntary_ctxt_switches:", 0) == 0) return std::stoull(line.substr(24));
  return 0;
}

// The processes running the streamer with `config`: the job's ranks.
std::vector<int> RanksWith(const std::string& config) {
  std::vector<int> pids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.rfind(kStreamer + '\0', 0) == 0 && cmdline.find(config) != std::string::npos)
      pids.push_back(std::stoi(name));
  }
  return pids;
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
