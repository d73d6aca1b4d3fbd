// What the streamer's end-to-end tests share (streamer_test.cpp: streaming
// and refusals; streamer_stop_test.cpp: stopping, and a disk that fails;
// streamer_dead_rank_test.cpp: a rank that dies): mpirun, a 2x2 wall of
// small tiles from a synthetic store, a test receiver per tile built from
// the common parser, and the jobs' processes.
#pragma once

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

#include "common/store/tile_store.h"
#include "common/wire/sdp.h"
#include "tests/support/built_paths.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"
#include "tests/support/thread_policy.h"
#include "tests/support/tile_capture.h"
#include "tests/support/wait_for.h"
#include "tools/wallcut/frame_source.h"
#include "tools/wallcut/movie_cutter.h"
#include "tools/wallcut/wall_cutter.h"

namespace tilestream {

using ::testing::HasSubstr;
using testing::ProcessResult;
using testing::Shell;
using testing::TempDir;
using testing::TileCapture;

inline const std::string kStreamer = STREAMER_PATH;
inline const std::string kMpirun = MPIRUN_PATH;
inline const std::string kWallctl = WALLCTL_PATH;
constexpr uint64_t kFrames = 8;
constexpr uint64_t kTicks = 20;  // more than the movie: it loops
constexpr double kFps = 25;

inline WallSettings TestWall() {
  WallSettings w;
  w.layout = {2, 2};
  w.tile = {160, 100};
  w.bezel_x = 8;
  w.bezel_y = 4;
  w.fps = kFps;
  return w;
}

inline std::string Mpirun(int ranks) {
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

// Benchmark mode: every tile sends on its own schedule until --duration,
// whatever the rank count (a rank streaming several tiles keeps each going),
// from the disk ring by default. Paced, every frame arrives whole and is the
// store's frame of its timestamp.
inline void StreamerTest::BenchAndCheck(int ranks, const std::string& flags, bool check_frames) {
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

// Children of `pid`, optionally only those whose command line matches `name`.
inline std::vector<int> Children(int pid, const std::string& name = "") {
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
inline std::string StopsWithAFinalReport(const std::string& command, int signal, bool to_group,
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

// A read error on one tile's file while streaming (`fault` makes it): that
// tile reports it once (`said`) and keeps sending its last frame; the others
// are untouched.
inline void StreamerTest::ExpectTheTileHoldsItsLastFrameAfter(const std::function<void()>& fault,
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

// Processes left in session `sid` (mpirun's, which the launcher makes a
// session leader), other than zombies.
inline std::vector<int> InSession(int sid) {
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
inline int RankOf(int pid) {
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

inline MidStreamJob StartMidStream(const std::string& command, const std::string& out,
                                   size_t processes) {
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
inline bool ExitsWithinAMinute(pid_t pid, int* status) {
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
inline void DeadRankEndsTheJob(const std::string& command, const std::string& out, Victim victim,
                               const std::string& said, size_t processes = 5,
                               bool hung_mpirun = false) {
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

inline const std::string kTileDied = "tile r[01]c[01] \\(rank [1-4]\\) (died|stopped responding)";
inline const std::string kCoordinatorDied =
    "the coordinator \\(rank 0\\) died|no word from the coordinator; ending the job";

// The launcher (scripts/streamer.sh) with `ranks` ("" spawns the tiles) on
// this test's wall and movie.
inline std::string StreamerTest::Launcher(const std::string& ranks,
                                          const std::vector<std::unique_ptr<TileCapture>>& captures,
                                          const std::string& streamer) {
  return "env STREAMER=" + streamer + " " + TILESTREAM_SOURCE_DIR + "/scripts/streamer.sh " +
         ranks + " --config " + WriteConfig(captures) + " --movie " + movie();
}

// Wake-ups of a process's main thread so far: the times it blocked.
inline uint64_t MainThreadWakeUps(int pid) {
  const std::string path =
      "/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/status";
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("voluntary_ctxt_switches:", 0) == 0) return std::stoull(line.substr(24));
  return 0;
}

// The processes running the streamer with `config`: the job's ranks.
inline std::vector<int> RanksWith(const std::string& config) {
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

}  // namespace tilestream
