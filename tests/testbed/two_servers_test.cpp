// A wall over two streaming servers on the testbed (testbed/testbed.sh
// up-two-servers): ts-srv1 and ts-srv2, each with a host name of its own and
// two NICs, a management link between them for MPI, 8 display nodes. One
// Open MPI job over both, launched as a user does (scripts/streamer.sh on
// the first server, which reaches the second through the testbed's rsh
// agent). Skipped (with the reason) when not root or without namespaces.
#include <gmock/gmock.h>

#include <filesystem>
#include <set>
#include <thread>

#include "tests/support/built_paths.h"
#include "tests/testbed/testbed_fixture.h"

namespace tilestream {
namespace {

using ::testing::HasSubstr;
using testing::kSourceDir;
using testing::ProcessResult;
using testing::Shell;

constexpr uint64_t kFrames = 8, kTicks = 50;

class TwoServers : public testing::TestbedFixture {
 protected:
  // A generous swap-sync deadline: on two loaded cores a node's report came
  // after one frame interval once, and the tick was skipped.
  void SetUp() override {
    SetUpWall("testbed-two-servers.toml", "[sync]\ndeadline_ms = 500", kFrames, "up-two-servers");
  }

  // scripts/streamer.sh on ts-srv1 as a user runs it; `movie` names what
  // it plays.
  std::string LaunchCommand(uint64_t ticks, const std::string& movie = "--movie movie") {
    return "MPIRUN_FLAGS='--mca plm_rsh_agent " + kSourceDir +
           "/testbed/testbed-rsh' STREAMER=" + STREAMER_PATH + " timeout 120 " + kSourceDir +
           "/testbed/testbed.sh exec srv1 " + kSourceDir + "/scripts/streamer.sh --config " +
           config_path_ + " " + movie + " --ticks " + std::to_string(ticks) + " -q --json " +
           (dir_ / "streamer.json");
  }
  ProcessResult StreamOverBoth(uint64_t ticks) { return Shell(LaunchCommand(ticks), dir_); }

  std::string ServerOf(uint32_t tile) const {
    return config_.servers[config_.routes[tile].server].name;
  }

  // `wallctl COMMAND` from display node tile01, as its operator would.
  std::pair<int, std::string> Ctl(const std::string& command) {
    const auto r = Shell(
        "ip netns exec ts-tile01 " + WALLCTL_PATH + " --config " + config_path_ + " " + command,
        dir_);
    return {r.exit_code, r.output};
  }

  // Processes in the namespace of server ts-`name` (none once a job is over).
  std::string ProcessesOn(const std::string& name) {
    return Shell("ip netns pids ts-" + name, dir_).output;
  }
};

TEST_F(TwoServers, EveryTileLeavesItsServersNicAndArrivesChecksumExact) {
  StartReceivers();
  std::map<uint32_t, uint64_t> before;
  for (uint32_t n = 0; n < config_.nics.size(); ++n)
    before[n] =
        TxBytes(config_.nics[n].name, config_.servers[config_.nics[n].server].name.substr(3));
  const uint64_t management_before = TxBytes("mgmt0", "srv2");
  const ProcessResult tx = StreamOverBoth(kTicks);
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  const std::map<uint32_t, uint64_t> sent = SentFrames();
  StopReceivers(sent);

  // Every tile's rank ran on its tile's server, by its own host name.
  const auto report = StreamerReport();  // the loop refers into it
  for (const auto& s : report["streams"]) {
    const uint32_t t = ParseTileName(s["tile"].get<std::string>(), config_.wall.layout)
                           ->Index(config_.wall.layout);
    EXPECT_EQ(s["host"], ServerOf(t)) << s["tile"];
    EXPECT_EQ(s["nic"], ServerOf(t) + "/" + config_.nics[config_.routes[t].nic].name);
  }
  // Every rank, ts-srv2's too (on the management network), waits for its
  // ticks on a doorbell.
  EXPECT_THAT(tx.output, ::testing::Not(HasSubstr("ticks polled"))) << tx.output;
  EXPECT_THAT(tx.output, HasSubstr("host ts-srv2")) << "the plan is in the output";
  // Each server's NICs carried the bytes of the frames their tiles (2
  // each) sent, within 5% (headers, ARP and, on ts-srv1's eth2, the
  // control connection ride along). The frames each sent, not the ticks:
  // a rank the loaded machine held up skips frames.
  const double frame_bytes = config_.wall.tile.frame_bytes() * 1.01;
  for (uint32_t n = 0; n < config_.nics.size(); ++n) {
    uint32_t tiles = 0;
    double expected = 0;
    for (uint32_t t = 0; t < config_.routes.size(); ++t) {
      if (config_.routes[t].nic != n) continue;
      ++tiles;
      expected += static_cast<double>(sent.at(t)) * frame_bytes;
    }
    const std::string server = config_.servers[config_.nics[n].server].name;
    const double bytes =
        static_cast<double>(TxBytes(config_.nics[n].name, server.substr(3)) - before[n]);
    EXPECT_EQ(tiles, 2u);
    EXPECT_NEAR(bytes / expected, 1.0, 0.05)
        << server << "/" << config_.nics[n].name << " carried " << bytes << " bytes";
  }
  // MPI between the servers went over the management link.
  EXPECT_GT(TxBytes("mgmt0", "srv2") - management_before, 10'000u);
  ExpectEveryFrameChecksumExact(sent, kFrames);
  EXPECT_GE(report["sync"]["presented"].get<uint64_t>() +
                report["aggregate"]["skipped_ticks"].get<uint64_t>(),
            kTicks)
      << "all 8 nodes in swap sync across both servers";
}

// A library whose movie B lacks the second server's tile files (a copy to
// that server not made yet): B is listed as not fitting, naming that
// server, and `load B` is refused while A plays on. Once B's files are
// there too, it is listed as fitting and loads on every tile of both
// servers.
TEST_F(TwoServers, AMovieCountsAsPresentOnlyWhenEveryServerHasIt) {
  const std::filesystem::path library = dir_ / "library", whole_b = dir_ / "B-whole";
  std::filesystem::create_directories(library);
  std::filesystem::create_directory_symlink(dir_ / "movie", library / "A");
  CutOptions co;
  co.wall = config_.wall;
  co.out_dir = whole_b;
  co.progress = false;
  ASSERT_TRUE(CutMovie(**MakeSyntheticSource(config_.wall, kFrames, 4, true), co).ok());
  const MovieManifest b = *OpenTileStore(whole_b);
  std::filesystem::copy(whole_b, library / "B");
  for (uint32_t t = 0; t < config_.tile_count(); ++t)
    if (ServerOf(t) == "ts-srv2") std::filesystem::remove(library / "B" / b.tile_files[t]);

  // B's entry in `movies` once `done` holds of it (the servers look every 5 s).
  const auto b_listed = [&](auto done) {
    nlohmann::json entry;
    testing::WaitFor([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      const auto j = nlohmann::json::parse(Ctl("movies").second, nullptr, false);
      if (!j.is_object() || !j["movies"].is_array()) return false;
      for (const auto& m : j["movies"])
        if (m.value("name", "") == "B") entry = m;
      return done(entry);
    });
    return entry;
  };
  StartReceivers();
  nlohmann::json missing, whole;
  std::pair<int, std::string> refused, loaded;
  std::thread control([&] {
    ASSERT_TRUE(testing::WaitFor([&] {
      const auto j = nlohmann::json::parse(Ctl("status").second, nullptr, false);
      return j.is_object() && j.value("tick", int64_t{-1}) >= 10;
    })) << "the wall never played";
    missing = b_listed([](const nlohmann::json& m) { return m.contains("problem"); });
    refused = Ctl("load B");
    for (uint32_t t = 0; t < config_.tile_count(); ++t)
      if (ServerOf(t) == "ts-srv2")
        std::filesystem::copy(whole_b / b.tile_files[t], library / "B" / b.tile_files[t]);
    whole = b_listed([](const nlohmann::json& m) { return m.value("fits", false); });
    loaded = Ctl("load B 2");
    const auto switched = nlohmann::json::parse(loaded.second, nullptr, false).value("tick", 0);
    testing::WaitFor([&] {
      const auto j = nlohmann::json::parse(Ctl("status").second, nullptr, false);
      return j.is_object() && j.value("tick", int64_t{-1}) >= switched + 25;
    });
    Ctl("stop");
  });
  const ProcessResult tx =
      Shell(LaunchCommand(100000, "--library " + library.string() + " --movie A"), dir_);
  control.join();
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  StopReceivers(SentFrames());

  EXPECT_EQ(missing.value("fits", true), false) << missing.dump();
  EXPECT_THAT(missing.value("problem", ""), HasSubstr("not on server ts-srv2")) << missing.dump();
  EXPECT_EQ(refused.first, 1) << refused.second;
  EXPECT_THAT(refused.second, HasSubstr("cannot load B: not on server ts-srv2"));
  EXPECT_EQ(whole.value("fits", false), true) << whole.dump();
  ASSERT_EQ(loaded.first, 0) << loaded.second;
  // Every tile of both servers ends on B's frames.
  uint32_t tiles = 0;
  for (const DisplayNode& node : config_.nodes) {
    for (const auto& [tile, frames] : testing::ReadFrameLog(dir_ / (node.name + ".txt"))) {
      ++tiles;
      ASSERT_FALSE(frames.empty()) << "tile " << tile;
      std::set<std::string> b_frames;
      for (uint64_t f = 0; f < kFrames; ++f)
        b_frames.insert(testing::StoreFrameChecksum(b, tile, f));
      EXPECT_TRUE(b_frames.contains(frames.rbegin()->second))
          << "tile " << tile << " (" << ServerOf(tile) << ") did not end on B";
    }
  }
  EXPECT_EQ(tiles, config_.tile_count());
}

// A tile's rank on the second server dies: the job ends at once, naming the
// tile and its server, and nothing of it is left on either server.
TEST_F(TwoServers, AKilledRankOnTheSecondServerEndsTheJobNamingTileAndServer) {
  const std::string out = dir_ / "job.out";
  const pid_t job = fork();
  if (job == 0) {
    execl("/bin/sh", "sh", "-c", (LaunchCommand(100000) + " > " + out + " 2>&1").c_str(), nullptr);
    _exit(127);
  }
  // The plan is printed once every tile is ready; then the last rank dies.
  ASSERT_TRUE(testing::WaitFor([&] { return testing::FileContains(out, "  host ts-srv", 8); }));
  const std::string last = std::to_string(config_.tile_count());
  std::smatch plan;
  const std::string printed = testing::FileText(out);
  ASSERT_TRUE(std::regex_search(
      printed, plan, std::regex("  tile (r[0-9]c[0-9]) +rank " + last + " .*host (.*)")));
  const std::string tile = plan[1];
  ASSERT_EQ(plan[2], "ts-srv2") << "the last rank runs on the second server";
  const auto kill = Shell(
      "for p in $(ip netns pids ts-srv2); do tr '\\0' '\\n' < /proc/$p/environ "
      "| grep -qx OMPI_COMM_WORLD_RANK=" +
          last + " && kill -9 $p; done; true",
      dir_);
  ASSERT_EQ(kill.exit_code, 0) << kill.output;
  int status = 0;
  ASSERT_TRUE(testing::WaitFor([&] { return waitpid(job, &status, WNOHANG) == job; }));
  EXPECT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const std::string output = testing::FileText(out);
  EXPECT_THAT(output, HasSubstr("tile " + tile + " (rank " + last +
                                ", on server ts-srv2) died; the job was ended"));
  EXPECT_TRUE(testing::WaitFor([&] { return ProcessesOn("srv1").empty(); })) << ProcessesOn("srv1");
  EXPECT_TRUE(testing::WaitFor([&] { return ProcessesOn("srv2").empty(); })) << ProcessesOn("srv2");
}

// mpirun by hand with a hostfile that lists the servers the wrong way
// round: every rank lands on the other server, and the streamer refuses,
// naming a tile, the host it runs on and its server.
TEST_F(TwoServers, ARankOnTheWrongServerIsRefusedNamingTheTileAndBothHosts) {
  std::ofstream(dir_ / "swapped") << "ts-srv2 slots=5\nts-srv1 slots=4\n";
  const ProcessResult r =
      Shell("timeout 60 " + kSourceDir + "/testbed/testbed.sh exec srv1 " + MPIRUN_PATH +
                " -n 9 --hostfile " + (dir_ / "swapped") + " --map-by slot --mca plm_rsh_agent " +
                kSourceDir +
                "/testbed/testbed-rsh --mca oob_tcp_if_include 10.99.0.0/24 --mca "
                "btl_tcp_if_include 10.99.0.0/24 " +
                STREAMER_PATH + " --config " + config_path_ + " --movie movie --ticks 10",
            dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, ::testing::ContainsRegex("tile r[01]c[0-3] runs on host 'ts-srv[12]', "
                                                 "but its server is 'ts-srv[12]'"));
  EXPECT_TRUE(testing::WaitFor([&] { return ProcessesOn("srv2").empty(); }));
}

}  // namespace
}  // namespace tilestream
