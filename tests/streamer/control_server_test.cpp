#include "streamer/control_server.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <array>
#include <chrono>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/base/clock.h"
#include "common/control/sync_datagram.h"
#include "common/net/datagram_port.h"
#include "common/net/line_channel.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait_for.h"

namespace tilestream {
namespace {

using ::testing::HasSubstr;

class ControlServerTest : public ::testing::Test {
 protected:
  void Open(bool with_token, const std::function<void(ControlSettings&)>& limits = nullptr) {
    config_ = DefaultWallConfig({2, 1});
    if (limits) limits(config_.control);
    config_.nodes[0].name = "left";  // both tiles on one node
    config_.nodes[0].address = node_address_;
    config_.control.port = 0;  // any free port
    if (with_token) {
      config_.control.token_file = dir_ / "token";
      std::ofstream(config_.control.token_file) << "s3cret\n";
    }
    auto s = ControlServer::Open(config_, &sync_, [](const std::string& line) {
      return line == "help" ? std::string(R"({"ok":true})")
                            : std::string(R"({"ok":false,"error":"no"})");
    });
    ASSERT_TRUE(s.ok()) << s.status().message();
    server_ = std::move(s).value();
  }

  LineChannel Connect() {
    auto fd = ConnectTcp("127.0.0.1", server_->port(), 1000);
    EXPECT_TRUE(fd.ok());
    server_->Poll(10'000'000);  // accept
    return LineChannel(std::move(fd).value());
  }

  // Sends `line` and serves until the reply arrives (or a second passed).
  std::string Ask(LineChannel* c, const std::string& line) {
    c->Send(line);
    for (int i = 0; i < 100; ++i) {
      server_->Poll(10'000'000);
      c->Receive();
      if (auto reply = c->NextLine()) return *reply;
    }
    return "<no reply>";
  }

  testing::TempDir dir_;
  std::string node_address_ = "127.0.0.1";  // where the display node connects from
  WallConfig config_;
  SwapSyncMaster sync_{2, false};
  std::unique_ptr<ControlServer> server_;
};

TEST_F(ControlServerTest, WithATokenCommandsNeedAuthFirst) {
  Open(/*with_token=*/true);
  LineChannel bare = Connect();
  EXPECT_THAT(Ask(&bare, "help"), HasSubstr("needs 'auth TOKEN' first"));
  bare.Receive();
  EXPECT_FALSE(bare.open()) << "closed";
  LineChannel wrong = Connect();
  EXPECT_THAT(Ask(&wrong, "auth guess"), HasSubstr("wrong token"));
  LineChannel right = Connect();
  EXPECT_EQ(Ask(&right, "auth s3cret"), R"({"ok":true})");
  EXPECT_EQ(Ask(&right, "help"), R"({"ok":true})");
}

TEST_F(ControlServerTest, AnErrorReplyKeepsTheConnectionOpen) {
  Open(/*with_token=*/false);
  LineChannel c = Connect();
  EXPECT_THAT(Ask(&c, "jump"), HasSubstr("\"ok\":false"));
  EXPECT_EQ(Ask(&c, "help"), R"({"ok":true})");
}

TEST_F(ControlServerTest, ASyncConnectionMakesItsNodesTilesTakePartUntilItCloses) {
  Open(/*with_token=*/false);
  LineChannel c = Connect();
  EXPECT_THAT(Ask(&c, "sync nowhere"), HasSubstr("no display node 'nowhere'"));
  EXPECT_THAT(Ask(&c, "sync left"), HasSubstr(R"("tiles":["r0c0","r0c1"])"));
  EXPECT_TRUE(sync_.member(0));
  EXPECT_TRUE(sync_.member(1));
  EXPECT_EQ(server_->synced_nodes(), 1u);
  c.Send("stats 1 30 2 0");
  c.Close("bye");
  for (int i = 0; i < 10 && server_->synced_nodes() > 0; ++i) server_->Poll(10'000'000);
  EXPECT_FALSE(sync_.member(0));
  EXPECT_EQ(server_->synced_nodes(), 0u);
  EXPECT_TRUE(server_->receiver_stats()[1].known);
  EXPECT_EQ(server_->receiver_stats()[1].stats.frames, 30u);
}

// A node that says its tile size at the join must have the wall's: one
// that assumed another (a movie of 320x200 tiles played to receivers
// started for 640x400) is refused, naming both sizes, to the node and in
// what the streamer says (NodeRefusal: its status and panel); once it joins
// with the right size, or says none (an older receiver), that is cleared.
TEST_F(ControlServerTest, ANodeWhoseTilesAreNotTheWallsSizeIsRefusedAtTheJoinNamingBoth) {
  Open(/*with_token=*/false);
  const TileGeometry wall = config_.wall.tile;
  const std::string other = fmt::format("{}x{}", wall.width / 2, wall.height / 2);
  const std::string same = fmt::format("{}x{}", wall.width, wall.height);
  LineChannel c = Connect();
  const std::string refused = Ask(&c, "sync left " + other);
  EXPECT_THAT(refused, HasSubstr("\"ok\":false"));
  EXPECT_THAT(refused, HasSubstr("has tiles of " + other + ", but the wall streams " + same));
  EXPECT_FALSE(sync_.member(0));
  EXPECT_EQ(server_->synced_nodes(), 0u);
  EXPECT_THAT(server_->NodeRefusal(0), HasSubstr("has tiles of " + other));
  EXPECT_THAT(Ask(&c, "sync left 0x5"), HasSubstr("\"ok\":false"));
  EXPECT_THAT(Ask(&c, "sync left " + same), HasSubstr(R"("sync":"left")"));
  EXPECT_TRUE(sync_.member(0));
  EXPECT_EQ(server_->NodeRefusal(0), "");
  LineChannel stranger = Connect();
  EXPECT_THAT(Ask(&stranger, "sync left " + other), HasSubstr("\"ok\":false"));
  EXPECT_TRUE(sync_.member(0)) << "the synced node keeps its place";
  EXPECT_EQ(server_->NodeRefusal(0), "") << "and is not shown refused";
  LineChannel older = Connect();
  EXPECT_THAT(Ask(&older, "sync left"), HasSubstr(R"("sync":"left")")) << "an older receiver";
}

// The sync's time-critical lines also come and go as datagrams
// (common/control/sync_datagram.h): with the key the reply to "sync" gave,
// a node's completes count and its decisions come back three times, each
// datagram carrying the decisions before; anyone else's datagrams, and a
// command in one, count for nothing.
// The join's ping goes by line; the node's first datagram brings one by
// datagram, whose pong settles the round trip. The line's pong, late (as
// after a lost segment), is then not taken: it would have set the playout
// latency to its maximum (common/control/node_round_trip.h).
TEST_F(ControlServerTest, ANodesFirstDatagramIsPingedBackAndALinesPongNoLongerCounts) {
  Open(/*with_token=*/false);
  LineChannel c = Connect();
  const auto reply = nlohmann::json::parse(Ask(&c, "sync left"));
  const auto key = ParseSyncKey(reply.value("udp_key", ""));
  ASSERT_TRUE(key) << reply.dump();
  const auto line_ping = ParseStamp("ping", Ask(&c, ""));
  ASSERT_TRUE(line_ping);
  auto udp = ConnectUdp("127.0.0.1", server_->port());
  ASSERT_TRUE(udp.ok()) << udp.status().message();
  SendCopies(udp->get(), FormatSyncDatagram(*key, ""), 1);  // where the node's come from
  std::array<char, kMaxSyncDatagram> buffer;
  std::optional<int64_t> datagram_ping;
  EXPECT_TRUE(testing::WaitFor([&] {
    server_->Poll(10'000'000);
    const ssize_t n = recv(udp->get(), buffer.data(), buffer.size(), MSG_DONTWAIT);
    const auto d = n > 0
                       ? ParseSyncDatagram(std::string_view(buffer.data(), static_cast<size_t>(n)))
                       : std::nullopt;
    if (d && d->count == 1) datagram_ping = ParseStamp("ping", d->lines[0]);
    return datagram_ping.has_value();
  }));
  ASSERT_TRUE(datagram_ping);
  EXPECT_EQ(server_->LargestRtt().samples, 0u);
  SendCopies(udp->get(), FormatSyncDatagram(*key, FormatPong(*datagram_ping)), 1);
  EXPECT_TRUE(testing::WaitFor([&] {
    server_->Poll(10'000'000);
    return server_->LargestRtt().samples == 1;
  }));
  const RttEstimate settled = server_->NodeRtt(0);
  const auto told = ParseRtt(Ask(&c, ""));  // the node is told
  ASSERT_TRUE(told);
  EXPECT_EQ(told->rtt_ns, settled.rtt_ns);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  c.Send(FormatPong(*line_ping));  // 50 ms later than the datagram's
  // Lines are served in order: the reply to a command after it comes
  // first, no "rtt" line (said after each sample taken) before it.
  EXPECT_THAT(Ask(&c, "no-such-command"), HasSubstr("error"));
  EXPECT_EQ(server_->NodeRtt(0).samples, settled.samples);
  EXPECT_EQ(server_->NodeRtt(0).rtt_ns, settled.rtt_ns);
}

TEST_F(ControlServerTest, ASyncedNodesDatagramsCarryItsReportsAndDecisionsOnlyWithItsKey) {
  Open(/*with_token=*/false);
  LineChannel c = Connect();
  const auto reply = nlohmann::json::parse(Ask(&c, "sync left"));
  const auto key = ParseSyncKey(reply.value("udp_key", ""));
  ASSERT_TRUE(key) << reply.dump();
  auto udp = ConnectUdp("127.0.0.1", server_->port());
  ASSERT_TRUE(udp.ok()) << udp.status().message();
  // Datagrams of one socket are read in order: once a pong sent after
  // them has made a round-trip sample, the server has read them all.
  const auto served_all_sent = [&] {
    const uint64_t before = server_->NodeRtt(0).samples;
    SendCopies(udp->get(), FormatSyncDatagram(*key, FormatPong(MonotonicNs())), 1);
    EXPECT_TRUE(testing::WaitFor([&] {
      server_->Poll(10'000'000);
      return server_->NodeRtt(0).samples > before;
    }));
  };
  sync_.OpenTick(0, 1000, MonotonicNs() + 60'000'000'000);
  // A stranger's key, a command, a malformed header: tile 0's complete
  // counts for nothing.
  SendCopies(udp->get(), FormatSyncDatagram(*key ^ 1, FormatComplete(0, 1000)), 1);
  SendCopies(udp->get(), FormatSyncDatagram(*key, "pause"), 1);
  SendCopies(udp->get(), "tsync nonsense\ncomplete 0 1000", 1);
  served_all_sent();
  std::vector<SyncEvent> events;
  sync_.Complete(1, 1000);
  sync_.Decide(MonotonicNs(), &events);
  EXPECT_TRUE(events.empty()) << "tile 0 reported by a stranger only";
  // The node's own, over TCP and in three copies: one complete.
  c.Send(FormatComplete(0, 1000));
  SendCopies(udp->get(), FormatSyncDatagram(*key, FormatComplete(0, 1000)), kSyncCopies);
  served_all_sent();
  server_->Poll(0);  // the TCP line, if it came after the last datagram
  sync_.Decide(MonotonicNs(), &events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(sync_.stats().unmatched, 0u) << "a copy is no late report";
  server_->SendSync(events);
  // The decision: by TCP, and three datagrams to where the node's came from.
  std::optional<SyncEvent> by_tcp;
  for (int i = 0; i < 10 && !by_tcp; ++i) by_tcp = ParseSyncEvent(Ask(&c, ""));  // past other lines
  ASSERT_TRUE(by_tcp);
  EXPECT_EQ(by_tcp->timestamp, 1000u);
  std::array<char, kMaxSyncDatagram> buffer;
  int decisions = 0;
  EXPECT_TRUE(testing::WaitFor([&] {
    const ssize_t n = recv(udp->get(), buffer.data(), buffer.size(), MSG_DONTWAIT);
    if (n < 0) return false;
    const auto d = ParseSyncDatagram(std::string_view(buffer.data(), static_cast<size_t>(n)));
    EXPECT_TRUE(d);
    if (!d || d->count == 0) return false;
    const auto e = ParseSyncEvent(d->lines[0]);
    if (!e) return false;  // a ping
    EXPECT_EQ(d->key, *key);
    EXPECT_EQ(d->count, 1u);
    EXPECT_EQ(e->tick, 0u);
    return ++decisions == kSyncCopies;
  }));
}

// The coordinator measures each display node's round trip on its sync
// connection: a ping at once on joining (and once a second after), which
// the node answers with the same stamp.
TEST_F(ControlServerTest, ASyncConnectionsRoundTripIsMeasuredFromPingToPong) {
  Open(/*with_token=*/false);
  LineChannel c = Connect();
  EXPECT_THAT(Ask(&c, "sync left"), HasSubstr(R"("sync":"left")"));
  EXPECT_EQ(server_->NodeRtt(0).samples, 0u);
  const std::string ping = Ask(&c, "");
  const auto stamp = ParseStamp("ping", ping);
  ASSERT_TRUE(stamp) << ping;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  c.Send(FormatPong(*stamp));
  for (int i = 0; i < 100 && server_->NodeRtt(0).samples == 0; ++i) server_->Poll(10'000'000);
  EXPECT_EQ(server_->NodeRtt(0).samples, 1u);
  EXPECT_GE(server_->NodeRtt(0).rtt_ns, 20'000'000);
  EXPECT_EQ(server_->NodeRtt(0).rttvar_ns, 0);  // one sample says nothing of the jitter
  // One pong by line may be a retransmission's: not settled until three
  // (or one by datagram), the latency does not take it.
  EXPECT_EQ(server_->LargestRtt().samples, 0u);
  // After each sample the node is told the round trip (its repairs wait as
  // long before they ask again), and pinged again at once, twice, for a
  // round trip with a deviation before tick 0.
  for (int i = 0; i < 2; ++i) {
    const auto rtt = ParseRtt(Ask(&c, ""));
    ASSERT_TRUE(rtt);
    EXPECT_EQ(rtt->rtt_ns, server_->NodeRtt(0).rtt_ns);
    const auto again = ParseStamp("ping", Ask(&c, ""));
    ASSERT_TRUE(again);
    c.Send(FormatPong(*again));
    for (int k = 0; k < 100 && server_->NodeRtt(0).samples == 1u + i; ++k)
      server_->Poll(10'000'000);
  }
  EXPECT_EQ(server_->NodeRtt(0).samples, 3u);
  EXPECT_EQ(server_->LargestRtt().samples, 1u);
  EXPECT_EQ(server_->LargestRtt().rtt_ns, server_->NodeRtt(0).rtt_ns);
  EXPECT_TRUE(ParseRtt(Ask(&c, "")));
  c.Send(FormatPong(MonotonicNs() + 1'000'000'000));  // from the future: no sample
  server_->Poll(10'000'000);
  EXPECT_EQ(server_->NodeRtt(0).samples, 3u);
  // The playout latency and a first request's copies, said to every
  // synced node, and to one that joins.
  server_->SetLatency(84'000'000);
  EXPECT_EQ(ParseStamp("latency", Ask(&c, "")), 84'000'000);
  server_->SetNackCopies(2);
  EXPECT_EQ(ParseStamp("nack_copies", Ask(&c, "")), 2);
  LineChannel late = Connect();
  EXPECT_THAT(Ask(&late, "sync left"), HasSubstr(R"("sync":"left")"));
  EXPECT_TRUE(ParseStamp("ping", Ask(&late, "")));
  EXPECT_EQ(ParseStamp("latency", Ask(&late, "")), 84'000'000);
  EXPECT_EQ(ParseStamp("nack_copies", Ask(&late, "")), 2);
}

TEST(ConstantTimeEquals, IsEqualityOfWholeStrings) {
  EXPECT_TRUE(ConstantTimeEquals("s3cret", "s3cret"));
  EXPECT_FALSE(ConstantTimeEquals("s3cre", "s3cret"));
  EXPECT_FALSE(ConstantTimeEquals("s3cret!", "s3cret"));
  EXPECT_FALSE(ConstantTimeEquals("s3creT", "s3cret"));
  EXPECT_FALSE(ConstantTimeEquals("", "s3cret"));
  EXPECT_FALSE(ConstantTimeEquals(std::string("s3cret\0", 7), "s3cret"));
}

TEST_F(ControlServerTest, ATokenThatIsOnlyAPrefixOrLongerIsWrong) {
  Open(/*with_token=*/true);
  for (const char* guess : {"auth s3cre", "auth s3cret2", "auth S3CRET", "auth"}) {
    LineChannel c = Connect();
    EXPECT_THAT(Ask(&c, guess), HasSubstr("wrong token")) << guess;
  }
}

// Past control.max_clients a new command connection takes the place of
// the stalest: the one longest without a line (here the node is elsewhere,
// so these clients have no places kept for them).
TEST_F(ControlServerTest, OneClientMoreThanTheConfiguredLimitTakesTheStalestsPlace) {
  node_address_ = "127.0.0.9";
  Open(/*with_token=*/false, [](ControlSettings& c) { c.max_clients = 2; });
  LineChannel a = Connect(), b = Connect();
  EXPECT_EQ(Ask(&b, "help"), R"({"ok":true})");  // b spoke last: a is the stalest
  LineChannel c = Connect();
  EXPECT_EQ(Ask(&c, "help"), R"({"ok":true})");
  EXPECT_THAT(Ask(&a, "help"), HasSubstr("the control port is full"));
  a.Receive();
  EXPECT_FALSE(a.open());
  EXPECT_EQ(Ask(&b, "help"), R"({"ok":true})");
}

TEST_F(ControlServerTest, ALineOverTheConfiguredLengthClosesOnlyItsClient) {
  Open(/*with_token=*/false, [](ControlSettings& c) { c.max_line_bytes = 300; });
  LineChannel good = Connect(), bad = Connect();
  EXPECT_EQ(Ask(&good, "help " + std::string(290, 'x')),
            R"({"ok":false,"error":"no"})");  // within the limit
  bad.Send(std::string(400, 'x'));
  for (int i = 0; i < 10; ++i) server_->Poll(10'000'000);
  bad.Receive();
  EXPECT_FALSE(bad.open()) << "closed by the server";
  EXPECT_EQ(Ask(&good, "help"), R"({"ok":true})");
}

// The line and idle bounds, on a clock the test drives: tests/streamer/hostile_clients_test.cpp.

TEST_F(ControlServerTest, RefusesToStartWithoutItsTokenFile) {
  WallConfig c = DefaultWallConfig({1, 1});
  c.control.port = 0;
  c.control.token_file = "/nonexistent/token";
  auto s = ControlServer::Open(c, &sync_, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("/nonexistent/token"));
}

}  // namespace
}  // namespace tilestream
