// Faults of the path between the server and the wall, injected where they
// really happen (docs/hardening.md, "Faults of the path"): the server's own
// kernel refusing sends (nftables' output hook, as a local firewall rule or
// a full conntrack table does: EPERM for each such send) and one of the
// server's NICs taken down: the two boundaries with the kernel a fault of
// the path crosses. (A display node's link that dies is the simulation's:
// sim/, node-link-down.)
// A 2x2 wall of 2560x1600 tiles at 5 fps from memory on the namespace
// testbed (testing::MemoryWallFixture). Root only.
#include <chrono>
#include <functional>
#include <thread>

#include "tests/testbed/testbed_fixture.h"

namespace tilestream {
namespace {

using testing::ReadFrameLog;
using testing::Shell;

class PathFaults : public testing::MemoryWallFixture {
 protected:
  // nftables on the server's output: `rule` (an nft rule body) refuses the
  // tile streams' datagrams as they are sent; the sender sees EPERM.
  void RefuseOnServerOutput(const std::string& rule) {
    const auto r = Shell(
        "ip netns exec ts-server nft 'add table inet fault; add chain inet fault refuse { type "
        "filter hook output priority 0; }; add rule inet fault refuse udp dport 50000-50099 " +
            rule + " counter drop'",
        dir_);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  double Refused() {
    return CountedDatagrams(
        Shell("ip netns exec ts-server nft list table inet fault", dir_).output);
  }

  // Plays `ticks` ticks from memory to every node; once node tile03 showed
  // 3 s of frames, runs `down`, then `while_down`, holds the fault for the
  // rest of kOutageS, runs `up`, then `once_up`. The streamer's output.
  std::string PlayThroughAFault(
      uint64_t ticks, const std::string& down, const std::string& up,
      const std::function<void()>& while_down = [] {},
      const std::function<void()>& once_up = [] {}) {
    StartReceivers();
    testing::ProcessResult tx;
    std::thread stream([&] { tx = Stream(ticks, "--source memory"); });
    const bool playing =
        testing::WaitFor([&] { return ReadFrameLog(dir_ / "tile03.txt")[2].size() >= 3 * kFps; },
                         std::chrono::seconds(60));
    const testing::TempDir own;  // Shell's output file: the stream's is in dir_
    const auto start = std::chrono::steady_clock::now();
    const auto d = Shell(down, own);
    while_down();
    std::this_thread::sleep_until(start + std::chrono::seconds(kOutageS));  // the fault itself
    const auto u = Shell(up, own);
    once_up();
    stream.join();
    EXPECT_TRUE(playing) << "tile03 showed no frames: " << tx.output;
    EXPECT_EQ(d.exit_code, 0) << down << ": " << d.output;
    EXPECT_EQ(u.exit_code, 0) << up << ": " << u.output;
    EXPECT_EQ(tx.exit_code, 0) << tx.output;
    return tx.output;
  }

  static constexpr int64_t kOutageS = 5;
};

TEST_F(PathFaults, ARefusedSendCostsOnlyThatDatagram) {
  RefuseOnServerOutput("numgen random mod 100 < 1");
  const auto sent = Play(kTicks);
  ExpectNothingLostOnScreen(sent, kTicks, kStoreFrames);

  // The streamer counted each send nft refused (originals and
  // retransmissions alike): lost with EPERM, or, refused inside a batch
  // where sendmmsg gives no errno, sent again alone. It said so in its log.
  const double refused = Refused();
  uint64_t lost_at_server = 0, resent = 0, errors = 0;
  const nlohmann::json report = StreamerReport();
  for (const auto& s : report["streams"]) {
    lost_at_server += s["refusals"].value("EPERM", uint64_t{0});
    resent += s["refused_resent"].get<uint64_t>();
    errors += s["send_errors"].get<uint64_t>();
  }
  EXPECT_GT(refused, 0);
  EXPECT_NEAR(static_cast<double>(lost_at_server + resent) / refused, 1.0, 0.15)
      << lost_at_server << " refused with EPERM and " << resent
      << " refused once and sent again, nft refused ~" << refused;
  EXPECT_EQ(errors, lost_at_server) << "no errno but EPERM: " << report["streams"].dump();
  EXPECT_NE(stream_output_.find("the kernel refuses sends with EPERM"), std::string::npos)
      << stream_output_;

  // The nodes lost what was not sent again, and asked for it back
  // (accounted for above).
  uint64_t lost = 0;
  for (const DisplayNode& node : config_.nodes) {
    const auto t = NodeReport(node.name)["tiles"][0];
    EXPECT_GT(t["lost"].get<uint64_t>(), 0u) << node.name;
    EXPECT_GT(t["recovered"].get<uint64_t>(), 0u) << t.dump();
    lost += t["lost"].get<uint64_t>();
  }
  EXPECT_NEAR(static_cast<double>(lost) / static_cast<double>(lost_at_server), 1.0, 0.15)
      << lost << " lost at the nodes, " << lost_at_server << " refused at the server";
}

// The server's NIC eth5 (tile r1c1's, to node tile04) goes down for 5 s
// mid-play: r1c1 streams through one of the other NICs within a second,
// every frame it sends there arrives exact, and once eth5 is up again it
// streams from eth5 within a second. (Not eth2: the testbed's control
// listener is on eth2's address, as a wall's is on its management network.)
TEST_F(PathFaults, ANicThatGoesDownMovesItsTiles) {
  const auto ticks = static_cast<uint64_t>(15 * kFps);
  const double tile_bytes_per_s = config_.wall.tile.frame_bytes() * kFps;
  uint64_t nic_down = 0, others_down = 0, nic_up = 0;
  const auto others = [&] { return TxBytes("eth2") + TxBytes("eth3") + TxBytes("eth4"); };
  const std::string out = PlayThroughAFault(
      ticks, "ip -n ts-server link set eth5 down", "ip -n ts-server link set eth5 up",
      [&] {  // the outage's last 3 s: eth5 sends nothing, the others carry all four tiles
        std::this_thread::sleep_for(std::chrono::seconds(2));
        nic_down = TxBytes("eth5");
        others_down = others();
        std::this_thread::sleep_for(std::chrono::seconds(3));
        nic_down = TxBytes("eth5") - nic_down;
        others_down = others() - others_down;
      },
      [&] {  // from 1 s after it came back: eth5 carries r1c1 again
        std::this_thread::sleep_for(std::chrono::seconds(1));
        nic_up = TxBytes("eth5");
        std::this_thread::sleep_for(std::chrono::seconds(2));
        nic_up = TxBytes("eth5") - nic_up;
      });
  const std::map<uint32_t, uint64_t> sent = SentFrames();
  std::map<uint32_t, uint64_t> awaited = sent;
  awaited.erase(3);  // r1c1 lost frames to the move: not waited for
  StopReceivers(awaited);

  EXPECT_NE(out.find("tile r1c1: NIC eth5 is down: streaming from eth"), std::string::npos) << out;
  EXPECT_NE(out.find("tile r1c1: NIC eth5 is back"), std::string::npos) << out;
  EXPECT_LT(static_cast<double>(nic_down), 0.01 * 3 * tile_bytes_per_s) << "eth5 was down";
  EXPECT_GT(static_cast<double>(others_down), 0.8 * 4 * 3 * tile_bytes_per_s)
      << "the other NICs carried all four tiles";
  EXPECT_GT(static_cast<double>(nic_up), 0.8 * 2 * tile_bytes_per_s) << "r1c1 back on eth5";
  // At most a second of r1c1's frames lost to the move; every frame shown exact.
  ExpectEveryFrameChecksumExact(sent, kStoreFrames, static_cast<uint64_t>(kFps));
  const nlohmann::json report = StreamerReport();
  uint64_t sender_late = 0;
  for (const auto& s : report["streams"]) {
    sender_late += s["late_frames"].get<uint64_t>();
    if (s["tile"] != "r1c1") continue;
    EXPECT_EQ(s["nic_moves"], 2) << "away and back: " << s.dump();
    EXPECT_EQ(s["nic"], "eth5") << s.dump();
  }
  EXPECT_LE(report["sync"]["skipped"].get<uint64_t>(), static_cast<uint64_t>(kFps) + sender_late)
      << report["sync"].dump();
}

}  // namespace
}  // namespace tilestream
