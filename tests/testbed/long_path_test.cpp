// A wall far from its server (docs/operations.md, "A wall far from its
// server"): the testbed with a long path between the server and its
// switch (testbed/testbed.sh up --path SPEC, a delay line in user space:
// testbed/pathline). First the path itself: does it delay, spread, lose and
// carry as it is told. Then the wall over it: the 2x2 wall of 2560x1600
// tiles (1.97 Gbit/s at 5 fps, testing::MemoryWallFixture says why that
// rate on this VM) for 20 s, with the playout latency the round trips
// give (`auto`). Root only.
#include <cmath>
#include <fstream>
#include <iostream>

#include "tests/support/built_paths.h"
#include "tests/testbed/testbed_fixture.h"

namespace tilestream {
namespace {

using testing::Shell;

class LongPath : public testing::TestbedFixture {
 protected:
  void SetUp() override {
    if (getuid() != 0) GTEST_SKIP() << "the testbed needs root (network namespaces)";
    if (Shell("command -v iptables", dir_).exit_code != 0) GTEST_SKIP() << "needs iptables";
    setenv("TILESTREAM_PATHLINE", ::tilestream::testing::built::kPathline, 1);
  }
  void TearDown() override {
    TestbedFixture::TearDown();
    Shell(testing::kSourceDir + "/testbed/testbed.sh down", dir_);
  }

  void UpWithPath(const std::string& spec) {
    const auto up = Shell(testing::kSourceDir + "/testbed/testbed.sh up --path " + spec, dir_);
    ASSERT_EQ(up.exit_code, 0) << up.output;
  }

  // The probe from the server to an echo on display node tile01.
  nlohmann::json Probe(uint64_t count, double gbps, uint32_t bytes) {
    const auto r =
        Shell("ip netns exec ts-server " + PATHLINE_PATH + " probe --to 10.10.0.11:9999 --count " +
                  std::to_string(count) + " --gbps " + std::to_string(gbps) + " --bytes " +
                  std::to_string(bytes),
              dir_);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return nlohmann::json::parse(r.output, nullptr, false);
  }
  void StartEcho() {
    const auto r = Shell("ip netns exec ts-tile01 " + PATHLINE_PATH +
                             " echo --port 9999 --seconds 60 > /dev/null 2>&1 &",
                         dir_);
    ASSERT_EQ(r.exit_code, 0);
    // Answering once a probe comes back.
    ASSERT_TRUE(testing::WaitFor([&] { return Probe(1, 0.001, 64)["answered"] == 1; }));
  }
  // The 2x2 wall over the path `spec`, its latency `auto`; `stream`: more
  // of its [stream] table.
  void UpWallWithPath(const std::string& spec, const std::string& stream = "") {
    if (Shell("command -v nft", dir_).exit_code != 0) GTEST_SKIP() << "needs nftables (nft)";
    SetUpWall("testbed-2x2.toml", "[sync]\nlatency_ms = \"auto\"\n", kStoreFrames,
              "up --path " + spec, kFps);
    if (stream.empty()) return;
    std::stringstream text;
    text << std::ifstream(config_path_).rdbuf();
    std::ofstream(config_path_) << std::regex_replace(text.str(), std::regex("\n\\[stream\\]\n"),
                                                      "\n[stream]\n" + stream);
    auto c = LoadWallConfig(config_path_);
    ASSERT_TRUE(c.ok()) << c.status().message();
    config_ = *c;
  }
  // The latency the wall chose, in ms, and its skew's 99th percentile.
  double Latency() {
    std::cout << "swap sync: " << StreamerReport()["sync"].dump() << "\n";  // for the record
    return StreamerReport()["sync"]["latency_ms"].get<double>();
  }
  double SkewP99() { return StreamerReport()["sync"]["skew_p99_ms"].get<double>(); }

  // Every tile in step: the path's jitter never reached the screen (every
  // decision came to its node before its moment), and the skew's p99 is
  // within bound_ms, or within it and the most a display node's presenter
  // woke late for a moment: here four display nodes, the server and the
  // delay line share the 2 vCPUs of a VM whose host takes them away for
  // milliseconds at a time (27% of the CPU time stolen in one run, a
  // presenter at SCHED_FIFO woke 20 ms late), which nodes of their own do
  // not share with anything. A skew no late wake-up explains fails.
  void ExpectInStep(double bound_ms) {
    double woke_late_ms = 0;
    std::string nodes;
    for (const DisplayNode& node : config_.nodes) {
      const nlohmann::json sync = NodeReport(node.name)["sync"];
      EXPECT_EQ(sync["late_decisions"], 0) << node.name << ": " << sync.dump();
      woke_late_ms = std::max(woke_late_ms, sync["woke_late_max_ms"].get<double>());
      nodes += "\n" + node.name + ": " + sync.dump();
    }
    EXPECT_LE(SkewP99(), bound_ms + woke_late_ms) << StreamerReport()["sync"].dump() << nodes;
    if (SkewP99() > bound_ms)
      std::cerr << "skew p99 " << SkewP99() << " ms, over " << bound_ms
                << " ms: a display node woke up to " << woke_late_ms << " ms late\n";
  }
  nlohmann::json Tile(const std::string& node) { return NodeReport(node)["tiles"][0]; }

  // The same wall over the same path in the simulation (sim/, scenario
  // `scenario`), its report.
  nlohmann::json Simulated(const std::string& scenario) {
    const std::string json = dir_ / "sim.json";
    const auto r = Shell(WALLSIM_PATH + " --scenario " + scenario + " --json " + json, dir_);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::ifstream in(json);
    return nlohmann::json::parse(in, nullptr, false);
  }

  static constexpr uint64_t kStoreFrames = 4;  // --source memory sends the store's first 4
  static constexpr double kFps = 5;
  static constexpr uint64_t kTicks = 100;  // 20 s

  void ExpectTheSimulationAgrees();

  nlohmann::json PathReport() {
    const auto r = Shell(testing::kSourceDir + "/testbed/testbed.sh path-report", dir_);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return nlohmann::json::parse(r.output, nullptr, false);
  }
};

// Each way's delay against the setting (rtt 20 ms: 10 ms each way, jitter
// a normal spread of 2 ms). The delay line's schedule, which it controls:
// the middle where it is set (within 1 ms: most datagrams come in the 2 s
// of load, some 170 draws of the jitter), the spread as wide as a normal
// distribution's (its 1st and 99th percentiles 2.3 deviations out; cut at
// 3). What a stamped datagram measured from outside, where the VM's host
// can only add: at least that schedule. Then the wall's 8960-byte
// datagrams at up to 3 Gbit/s: every one the line was handed went on,
// nothing overrun. How many the echo answered and how late the line
// released against its schedule are the host's scheduling: printed, not
// asserted (beside two CPU hogs the echo's socket dropped 14% and the
// line's lateness p99 passed 2 ms).
TEST_F(LongPath, TheDelayLineDelaysAsSetAndCarriesTheWallsRate) {
  UpWithPath("rtt=20ms,jitter=2ms");
  StartEcho();
  const nlohmann::json quiet = Probe(8000, 0.016, 1000);  // 4 s
  ASSERT_EQ(quiet["answered"], 8000) << quiet.dump();
  for (const char* way : {"out", "back"}) {
    const nlohmann::json& d = quiet[way];
    EXPECT_GE(d["p1_us"].get<double>(), 10'000 - 3 * 2'000) << way << " " << d.dump();
    EXPECT_GE(d["p50_us"].get<double>(), 10'000 - 500) << way << " " << d.dump();
    EXPECT_GE(d["p99_us"].get<double>(), 10'000 + 2'000) << way << " " << d.dump();
  }
  const nlohmann::json load = Probe(84'000, 3, 8960);  // 2 s
  EXPECT_EQ(load["sent"], 84'000) << load.dump();
  const nlohmann::json line = PathReport();
  std::cout << "delay line: " << line.dump() << "\n";  // its lateness, for the record
  EXPECT_GE(line["out"]["packets"].get<uint64_t>(), 92'000u) << line.dump();
  EXPECT_GE(line["in"]["packets"].get<uint64_t>(),
            quiet["answered"].get<uint64_t>() + load["answered"].get<uint64_t>())
      << line.dump();
  for (const char* way : {"out", "in"}) {
    EXPECT_EQ(line[way]["lost"], 0) << line.dump();
    const nlohmann::json& d = line[way]["drawn"];
    EXPECT_EQ(d["count"], line[way]["packets"]) << way << " " << d.dump();
    EXPECT_NEAR(d["p50_us"].get<double>(), 10'000, 1'000) << way << " " << d.dump();
    EXPECT_GE(d["p1_us"].get<double>(), 10'000 - 3 * 2'000) << way << " " << d.dump();
    EXPECT_LE(d["p1_us"].get<double>(), 10'000 - 2'000) << way << " " << d.dump();
    EXPECT_GE(d["p99_us"].get<double>(), 10'000 + 2'000) << way << " " << d.dump();
    EXPECT_LE(d["p99_us"].get<double>(), 10'000 + 3 * 2'000) << way << " " << d.dump();
  }
  EXPECT_EQ(line["overruns"], 0) << line.dump();
}

// Loss as set, counted by the probe and the line alike; reordering as set.
TEST_F(LongPath, TheDelayLineLosesAndReordersAsSet) {
  UpWithPath("rtt=2ms,loss=1%,reorder=2%,reorder_by=1ms,seed=11");
  StartEcho();
  const nlohmann::json p = Probe(20'000, 0.08, 1000);  // 2 s, a datagram every 100 us
  const double answered = p["answered"].get<double>();
  // Either way: about 2% of the round trips lost.
  EXPECT_NEAR(answered, 20'000 * 0.99 * 0.99, 20'000 * 0.006) << p.dump();
  // A reordered answer is one passed by a later one: out by up to 1 ms is
  // up to 10 later ones.
  EXPECT_GE(p["reordered"].get<double>(), 20'000 * 0.02 * 0.5) << p.dump();
  const nlohmann::json line = PathReport();
  const double lost = line["out"]["lost"].get<double>() + line["in"]["lost"].get<double>();
  // (and of the probes that waited for the echo to answer, a few at most)
  EXPECT_GE(lost, 20'000 - answered) << line.dump();
  EXPECT_LE(lost, 20'000 - answered + 5) << line.dump();
  EXPECT_NEAR(line["out"]["reordered"].get<double>(), 20'000 * 0.02, 20'000 * 0.006) << line.dump();
}

// The original demonstration's distance (Amsterdam to Geneva): a round trip
// of 20 ms with 2 ms of jitter each way and 0.5% of the datagrams lost
// (media, requests and retransmissions alike). Every tick shown on every
// tile at once, every frame whole and checksum-exact. The latency is at
// least the round trip; its bound (a frame interval and 2.5 round trips)
// is the simulation's `rtt-20ms` on virtual time and the path bench's on
// a quiet machine: here a loaded VM's late answers and stalls raise it
// (260 and 397 ms of 250 beside two CPU hogs, before and after the
// repairs' copies alike), the host's time, not asserted.
TEST_F(LongPath, TwentyMillisecondsAwayWithJitterAndLossEveryTickIsShownInStep) {
  UpWallWithPath("rtt=20ms,jitter=2ms,loss=0.5%");
  const auto sent = Play(kTicks);
  ExpectNothingLostOnScreen(sent, kTicks, kStoreFrames);
  EXPECT_GT(Latency(), 20.0);  // at least the round trip
  ExpectInStep(1.0);
  for (const DisplayNode& node : config_.nodes) {  // accounted for above
    const nlohmann::json t = Tile(node.name);
    EXPECT_GT(t["lost"].get<uint64_t>(), 0u) << t.dump();
    EXPECT_GT(t["recovered"].get<uint64_t>(), 0u) << t.dump();
  }
  ExpectTheSimulationAgrees();
}

// Parity (issue 42): the simulation's `rtt-20ms` is this wall over this
// path (2x2 of 2560x1600 on 4 nodes at 5 fps for 20 s, rtt 20 ms, jitter
// 2 ms, 0.5% of the datagrams lost, latency auto). Its counters and the
// live ones agree: every tick shown simulated, all but 2 at most live;
// what each lost, within four
// deviations of 0.5% of the datagrams sent (a binomial draw each); all of
// it recovered in both; requests per lost packet within 0.15 of each
// other (each at most 1.2); the latency chosen live at least three
// quarters of the simulated (above it, by how much a loaded VM's repairs
// and reports take longer than the path, is the VM host's: docs/
// decisions.md, issue 37); the repair round trip live no shorter than the
// simulated one, less 6 ms of the path's jitter. A run whose receivers
// the host starved, by their own measure (a tile fell so far behind that
// it dropped what waited in its socket: `catch_ups`, or the kernel dropped
// for it: `kernel_drops`), lost on the host what the path did not, and
// skipped its ticks: its ticks and loss are printed, not judged (beside
// two CPU hogs, 1 run in 5 to 7 took 100 s instead of 40, lost 5,372
// where the path lost 0.5%, 2,459, and showed 82 ticks). Ticks the
// senders skipped or were late for, by their own count, are excused as
// ExpectNothingLostOnScreen excuses them.
void LongPath::ExpectTheSimulationAgrees() {
  const nlohmann::json sim = Simulated("rtt-20ms");
  const nlohmann::json live_sync = StreamerReport()["sync"];
  const double latency = live_sync["latency_ms"].get<double>();
  EXPECT_EQ(sim["sync"]["presented"], kTicks) << sim["sync"].dump();
  uint64_t starved = 0;
  for (const DisplayNode& node : config_.nodes)
    starved += Tile(node.name)["catch_ups"].get<uint64_t>() +
               Tile(node.name)["kernel_drops"].get<uint64_t>();
  // A report that missed its deadline on the loaded VM (its host's time)
  // skipped one tick of 100 in 1 run of 10 beside two CPU hogs; with the
  // machine starved, more, each counted as a report that came late
  // (`unmatched`, one per tile).
  // A tick a loaded sender skipped or was late for is the host's too, by
  // the senders' own count (as ExpectNothingLostOnScreen excuses it, and a
  // tick the coordinator shed for senders behind), and
  // so is one whose leader's decision had not come a round trip, four
  // deviations and 100 ms after its deadline (`abandoned`: beside two CPU
  // hogs a starved leader's last 10).
  uint64_t sender_skips = 0, sender_late = 0;
  for (const auto& st : StreamerReport()["streams"]) {
    sender_skips = std::max(sender_skips, st["skipped_ticks"].get<uint64_t>());
    sender_late += st["late_frames"].get<uint64_t>();
  }
  if (starved == 0) {
    EXPECT_GE(live_sync["presented"].get<uint64_t>() + 2 + live_sync["unmatched"].get<uint64_t>() +
                  live_sync["abandoned"].get<uint64_t>() + sender_skips + sender_late + TicksShed(),
              kTicks)
        << live_sync.dump() << " senders skipped " << sender_skips << ", late " << sender_late
        << "; " << StreamerReport()["ticks"].dump();
  }
  EXPECT_GE(latency, 0.75 * sim["sync"]["latency_ms"].get<double>()) << sim["sync"].dump();
  double live_lost = 0, live_requested = 0, live_received = 0, sim_lost = 0, sim_requested = 0;
  for (const nlohmann::json& t : sim["tiles"]) {
    EXPECT_EQ(t["recovered"], t["lost"]) << t.dump();
    sim_lost += t["lost"].get<double>();
    sim_requested += t["nack_requested"].get<double>();
  }
  for (size_t n = 0; n < config_.nodes.size(); ++n) {
    const nlohmann::json t = Tile(config_.nodes[n].name);
    live_lost += t["lost"].get<double>();
    live_requested += t["nack_requested"].get<double>();
    live_received += t["datagrams"].get<double>();
    // A repair takes the path's round trip at least, as simulated; how much
    // longer a loaded machine takes to answer is the VM host's (28 ms of
    // 20 in one run beside two CPU hogs), not asserted.
    EXPECT_GE(t["repair_rtt_ms"].get<double>(), sim["tiles"][n]["repair_rtt_ms"].get<double>() - 6)
        << t.dump() << "\nsimulated: " << sim["tiles"][n].dump();
  }
  // The same path: 0.5% of what each sent (live, of what came and was lost:
  // a loaded VM's streamer sheds ticks, which the simulation does not).
  const double expected = 0.005 * sim["sim"]["datagrams"].get<double>();
  EXPECT_NEAR(sim_lost, expected, 4 * std::sqrt(expected)) << sim.dump();
  const double expected_live = 0.005 * (live_received + live_lost);
  if (starved == 0) {
    EXPECT_NEAR(live_lost, expected_live, 4 * std::sqrt(expected_live));
  } else {
    std::cout << "parity of ticks and loss not judged: the receivers were starved (" << starved
              << " catch-ups and kernel drops); " << live_sync["presented"] << " ticks shown\n";
  }
  ASSERT_GT(live_lost, 0);
  ASSERT_GT(sim_lost, 0);
  EXPECT_NEAR(live_requested / live_lost, sim_requested / sim_lost, 0.15)
      << "live " << live_requested << " for " << live_lost << ", simulated " << sim_requested
      << " for " << sim_lost;
  std::cout << "parity: lost live " << live_lost << " simulated " << sim_lost
            << "; requests per lost live " << live_requested / live_lost << " simulated "
            << sim_requested / sim_lost << "; latency live " << latency << " ms simulated "
            << sim["sync"]["latency_ms"] << " ms\n";
}

// Issue 43: 40 ms away with 5 ms of jitter, 2% of every packet lost, the
// sync's TCP segments too, and a burst of 200 datagrams to display node
// tile01 8 s in. The ticks are decided at the wall's side (docs/
// decisions.md, "How the wall decides at its side"): a display node leads,
// the reports and its decisions cross the testbed's switch, not the delay
// line; every tick is the leader's, and every node takes most of them from
// it first. The sync's lines to and from the server also go as datagrams,
// three copies each ("Sync decisions that never wait for a lost segment"):
// no decision reaches a node after its moment, and the tiles stay in step
// (over TCP alone the skew's p99 was 92 ms here). Every packet lost is recovered, the burst's too,
// and every frame shown is exact. Whether each repair came within the
// latency is the loaded VM's (beside two CPU hogs one in 400 frames came
// after, its tick skipped on every node, the last build's and this one's
// alike): the loss is accounted for (ExpectLossAccountedFor), and a frame
// not shown must be one its node counted incomplete.
TEST_F(LongPath, FortyMillisecondsAwayLosingTwoPercentOfEveryPacketTcpTooAndABurst) {
  UpWallWithPath(
      "rtt=40ms,jitter=5ms,loss=2%,tcp_loss=yes,burst=200,burst_at=8s,burst_to=10.10.0.11");
  const auto sent = Play(kTicks);
  uint64_t incomplete = 0, led = 0;
  for (const DisplayNode& node : config_.nodes) {
    const nlohmann::json t = Tile(node.name);
    EXPECT_GT(t["lost"].get<uint64_t>(), 0u) << t.dump();
    incomplete += ExpectLossAccountedFor(t);
    const nlohmann::json sync = NodeReport(node.name)["sync"];
    EXPECT_GT(
        sync["decisions_by_lan"].get<uint64_t>(),
        sync["decisions_by_datagram"].get<uint64_t>() + sync["decisions_by_tcp"].get<uint64_t>())
        << node.name << ": " << sync.dump();
    led += sync["ticks_led"].get<uint64_t>();
    std::cout << node.name << ": " << sync.dump() << " " << t.dump() << "\n";  // for the record
  }
  EXPECT_GE(Tile("tile01")["lost"].get<uint64_t>(), 200u) << "the burst";
  const nlohmann::json wall = StreamerReport()["sync"];
  EXPECT_EQ(wall["abandoned"], 0) << wall.dump();
  EXPECT_EQ(wall["decided_by_leader"].get<uint64_t>(),
            wall["presented"].get<uint64_t>() + wall["skipped"].get<uint64_t>())
      << wall.dump();
  EXPECT_EQ(led, wall["decided_by_leader"].get<uint64_t>()) << "one leader, every tick its";
  ExpectEveryFrameChecksumExact(sent, kStoreFrames, incomplete);
  ExpectInStep(1.0);
  std::cout << "path: " << PathReport().dump() << "\nlatency " << Latency() << " ms, skew p99 "
            << SkewP99() << " ms, " << incomplete << " frames repaired too late\n";
}

// Across the Atlantic (rtt 80 ms), a burst of 50 lost 20 ms away, and
// reordering within the receivers' window (with duplicates) are the
// simulation's (sim/: rtt-80ms, burst-50, reorder-dup, and the swarm's
// reordering walls, which found a packet the assembler dropped); the path
// and the wall's code are the same as above.

}  // namespace
}  // namespace tilestream
