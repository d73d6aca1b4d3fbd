// Faults of the path between the server and the wall, injected where they
// really happen (docs/hardening.md, "Faults of the path"): the server's own
// kernel refusing sends (nftables' output hook, as a local firewall rule or
// a full conntrack table does: EPERM for each such send), and a display
// node's link taken down (its switch port: no FIN or RST reaches anyone).
// A 2x2 wall of 2560x1600 tiles at 10 fps from memory on the namespace
// testbed. Root only.
//
// Under AddressSanitizer the wall plays at 5 fps, as in
// retransmission_test.cpp: nine processes far slower than the optimized
// build on CI's 2 cores.
#include <chrono>
#include <thread>

#include "tests/testbed/testbed_fixture.h"

namespace tilestream {
namespace {

using testing::ReadFrameLog;
using testing::Shell;

constexpr uint64_t kStoreFrames = 4;  // --source memory sends the store's first 4
#ifdef __SANITIZE_ADDRESS__
constexpr double kFps = 5;
#else
constexpr double kFps = 10;
#endif
constexpr auto kTicks = static_cast<uint64_t>(20 * kFps);  // 20 s

class PathFaults : public testing::TestbedFixture {
 protected:
  void SetUp() override {
    if (Shell("command -v nft", dir_).exit_code != 0) GTEST_SKIP() << "needs nftables (nft)";
    SetUpWall("testbed-2x2.toml", "", kStoreFrames, "up", kFps);
  }

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

  // The nodes lost what was not sent again, and all of it came back.
  uint64_t lost = 0;
  for (const DisplayNode& node : config_.nodes) {
    const auto t = NodeReport(node.name)["tiles"][0];
    EXPECT_GT(t["lost"].get<uint64_t>(), 0u) << node.name;
    EXPECT_EQ(t["recovered"], t["lost"]) << t.dump();
    lost += t["lost"].get<uint64_t>();
  }
  EXPECT_NEAR(static_cast<double>(lost) / static_cast<double>(lost_at_server), 1.0, 0.15)
      << lost << " lost at the nodes, " << lost_at_server << " refused at the server";
}

// Display node tile03 (tile r1c0) loses its link for 5 s mid-play: the
// swap sync leaves it out after a few missed ticks and the other nodes
// play on; once its link is back it reconnects and is taken back into the
// sync within a second. (Its frames from before and after are checked by
// the other tests; here: the ticks.)
TEST_F(PathFaults, ADisplayNodeWhoseLinkDiesDoesNotFreezeTheWall) {
  constexpr int64_t kOutageS = 5;
  const auto ticks = static_cast<uint64_t>(15 * kFps);
  StartReceivers();
  testing::ProcessResult tx;
  std::thread stream([&] { tx = Stream(ticks, "--source memory"); });
  // Mid-play: once the node has shown 3 s of frames.
  const bool playing = testing::WaitFor(
      [&] { return ReadFrameLog(dir_ / "tile03.txt")[2].size() >= 3 * kFps; },
      std::chrono::seconds(60));
  const testing::TempDir own;  // Shell's output file: the stream's is in dir_
  const auto down = Shell("ip -n ts-switch link set node-03 down", own);
  std::this_thread::sleep_for(std::chrono::seconds(kOutageS));  // the outage itself
  const auto up = Shell("ip -n ts-switch link set node-03 up", own);
  stream.join();
  ASSERT_TRUE(playing) << "tile03 showed no frames";
  ASSERT_EQ(down.exit_code, 0) << down.output;
  ASSERT_EQ(up.exit_code, 0) << up.output;
  ASSERT_EQ(tx.exit_code, 0) << tx.output;
  StopReceivers();

  const nlohmann::json report = StreamerReport();
  const nlohmann::json& sync = report["sync"];
  uint64_t sender_late = 0;
  for (const auto& s : report["streams"]) sender_late += s["late_frames"].get<uint64_t>();
  // The other nodes showed at least 90% of the outage's ticks: at most a
  // tenth of them skipped waiting for tile03 (and those a sender was late for).
  const auto outage_ticks = static_cast<uint64_t>(kOutageS * kFps);
  EXPECT_LE(sync["skipped"].get<uint64_t>(), outage_ticks / 10 + sender_late) << sync.dump();
  EXPECT_GE(sync["left_out"].get<uint64_t>(), 1u) << sync.dump();
  // tile03 was without the sync for the outage and at most a second more.
  const auto without = sync["ticks_without"].value("r1c0", uint64_t{0});
  EXPECT_GT(without, 0u) << sync.dump();
  EXPECT_LE(without, static_cast<uint64_t>((kOutageS + 1) * kFps)) << sync.dump();
  for (const char* tile : {"r0c0", "r0c1", "r1c1"})
    EXPECT_EQ(sync["ticks_without"].value(tile, uint64_t{0}), 0u) << tile << ": " << sync.dump();
  EXPECT_NE(tx.output.find("swap sync: tile r1c0 (display node tile03) missed"), std::string::npos)
      << tx.output;
  // Back: tile03 showed ticks again after the outage.
  const auto node = NodeReport("tile03");
  EXPECT_GE(node["sync"]["presented"].get<uint64_t>(), ticks - without - sync["skipped"].get<uint64_t>() - sender_late)
      << node["sync"].dump();
}

}  // namespace
}  // namespace tilestream
