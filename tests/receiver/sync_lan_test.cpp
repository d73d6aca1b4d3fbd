// A display node's LAN socket (receiver/sync_leader.cpp) under hostile
// datagrams: the test is the coordinator (a listener on loopback that
// takes the node into the sync and names the leader) and another host on
// the wall's LAN. Whatever does not carry the wall's key in the sync
// datagram's exact form is dropped whole: no decision taken by a node that
// follows, no report taken by a node that leads. The real ones, keyed,
// are taken.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "common/control/sync_datagram.h"
#include "common/control/tick_leader.h"
#include "common/net/datagram_port.h"
#include "common/net/line_channel.h"
#include "receiver/sync_client.h"

namespace tilestream {
namespace {

constexpr uint64_t kWallKey = 0x5eed5eed5eed5eedULL;

// The coordinator's side of one node's sync connection.
class LanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto listener = ListenTcp("127.0.0.1", 0);
    ASSERT_TRUE(listener.ok()) << listener.status().message();
    listener_ = std::move(listener).value();
    sockaddr_storage bound{};
    socklen_t length = sizeof bound;
    ASSERT_EQ(getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&bound), &length), 0);
    const uint16_t port = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    client_ = std::make_unique<SyncClient>(SyncClientOptions{"127.0.0.1", port, "", "n0", {}});
    auto host = BindUdp("127.0.0.1", 0);
    ASSERT_TRUE(host.ok()) << host.status().message();
    host_ = std::move(host).value();
    Join();
  }

  // Takes the node in (with a key for its datagrams) and learns its LAN port.
  void Join() {
    client_->Poll(0, &events_);  // connects
    pollfd p{listener_.get(), POLLIN, 0};
    ASSERT_EQ(poll(&p, 1, 5000), 1) << "the node did not connect";
    const int fd = accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    ASSERT_GE(fd, 0);
    node_ = LineChannel(UniqueFd(fd));
    ASSERT_TRUE(Line("sync n0").starts_with("sync n0"));
    node_.Send(R"({"ok":true,"sync":"n0","tiles":["r0c0"],"udp_key":"0000000000000001"})");
    const std::string lan = Line("lan ");
    const auto port = ParseStamp("lan", lan);
    ASSERT_TRUE(port && *port > 0) << lan;
    lan_port_ = static_cast<uint16_t>(*port);
  }

  // The next line from the node that starts with `prefix`, polling the
  // client meanwhile (bounded); "" if none came.
  std::string Line(std::string_view prefix) {
    const int64_t until = MonotonicNs() + 5'000'000'000;
    while (MonotonicNs() < until) {
      client_->Poll(5, &events_);
      pollfd p{node_.fd(), POLLIN, 0};
      if (poll(&p, 1, 5) == 1 && !node_.Receive()) return "";
      while (auto line = node_.NextLine())
        if (line->starts_with(prefix)) return *line;
    }
    return "";
  }

  // To the node's LAN socket, from another host on the LAN.
  void ToLan(std::string_view datagram) {
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(lan_port_);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(sendto(host_.get(), datagram.data(), datagram.size(), 0,
                     reinterpret_cast<const sockaddr*>(&to), sizeof to),
              static_cast<ssize_t>(datagram.size()));
  }

  // Everything a hostile or broken host sends carrying `lines`: no key, a
  // wrong one, the right one in the wrong form, too long, too many lines,
  // nothing.
  void Hostile(const std::string& lines) {
    ToLan(lines);
    ToLan(FormatSyncDatagram(kWallKey + 1, lines));
    ToLan(FormatSyncDatagram(0, lines));
    ToLan("tsync 5eed5eed5eed5eed " + lines);
    ToLan(FormatSyncDatagram(kWallKey, lines) + std::string(kMaxSyncDatagram, '\n'));
    std::string many = FormatSyncDatagram(kWallKey, lines);
    for (size_t i = 0; i < kMaxSyncDatagramLines; ++i) many += "\n" + lines;
    ToLan(many);
    ToLan(std::string(kMaxSyncDatagram + 100, 'x'));
    ToLan("");
  }

  // Polls the client until `done` or `ms`.
  template <typename Done>
  bool PollUntil(Done done, int64_t ms = 5000) {
    const int64_t until = MonotonicNs() + ms * 1'000'000;
    while (!done() && MonotonicNs() < until) {
      client_->Poll(5, &events_);
      pollfd p{node_.fd(), POLLIN, 0};
      if (poll(&p, 1, 0) == 1) node_.Receive();
      while (node_.NextLine()) {
      }
    }
    return done();
  }

  // Sends `datagram` to the LAN socket every 50 ms until tick `tick` is
  // taken (5 s at most), as a real sender repeats itself: the lines that
  // name the leader may be taken after a datagram read in the same poll.
  bool SendUntilTaken(const std::string& datagram, uint64_t tick) {
    for (int i = 0; i < 100 && !Took(tick); ++i) {
      ToLan(datagram);
      PollUntil([&] { return Took(tick); }, 50);
    }
    return Took(tick);
  }

  bool Took(uint64_t tick) const {
    return std::any_of(events_.begin(), events_.end(),
                       [tick](const SyncEvent& e) { return e.tick == tick; });
  }
  const SyncEvent* Event(uint64_t tick) const {
    for (const SyncEvent& e : events_)
      if (e.tick == tick) return &e;
    return nullptr;
  }

  UniqueFd listener_, host_;
  LineChannel node_;
  std::unique_ptr<SyncClient> client_;
  std::vector<SyncEvent> events_;
  uint16_t lan_port_ = 0;
};

// A node that follows a leader takes its decisions from the LAN only with
// the wall's key; every other form is dropped and the node stays up. The
// LAN socket is read in order: the forgeries of tick 2 come before tick 3,
// and were dropped once tick 3 is taken.
TEST_F(LanTest, AFollowerTakesOnlyTheWallsKeyedDecisions) {
  node_.Send(FormatLeader({LanPeer{"127.0.0.1", 9}, kWallKey}));
  const auto decision = [](uint64_t tick) {
    return FormatSyncEvent({SyncDecision::kPresent, tick, static_cast<uint32_t>(9000 * tick), 0});
  };
  ASSERT_TRUE(SendUntilTaken(FormatSyncDatagram(kWallKey, decision(1)), 1));
  Hostile(decision(2));
  ToLan(FormatSyncDatagram(kWallKey, "present 18000"));  // keyed, malformed: dropped
  ASSERT_TRUE(SendUntilTaken(FormatSyncDatagram(kWallKey, decision(3)), 3));
  EXPECT_FALSE(Took(2)) << "a forged decision was taken";
  EXPECT_EQ(client_->decisions_by_lan(), 2u);
}

// A node that leads counts a tile complete only from a keyed report: a
// tick whose only reports were forged is skipped at its deadline, and the
// ticks reported with the key are shown, each once complete.
TEST_F(LanTest, ALeaderTakesOnlyTheWallsKeyedReports) {
  node_.Send(FormatLead({kWallKey, 1, false}));
  const int64_t now = RealtimeNs();
  for (uint64_t tick = 1; tick <= 3; ++tick) {
    const int64_t deadline =
        now + (tick == 3 ? 20'000'000'000 : 3'000'000'000 + static_cast<int64_t>(tick));
    node_.Send(FormatOpen(
        {tick, static_cast<uint32_t>(9000 * tick), deadline, deadline + 500'000'000, {true}}));
  }
  const auto report = [](uint64_t tick) {
    return FormatSyncDatagram(kWallKey, FormatComplete(0, static_cast<uint32_t>(9000 * tick)));
  };
  ASSERT_TRUE(SendUntilTaken(report(1), 1));
  Hostile(FormatComplete(0, 18000));
  ToLan(FormatSyncDatagram(kWallKey, "complete 0"));  // keyed, malformed: dropped
  PollUntil([&] { return Took(2); });                 // its deadline
  ASSERT_TRUE(SendUntilTaken(report(3), 3));
  ASSERT_TRUE(Event(2));
  EXPECT_EQ(Event(1)->decision, SyncDecision::kPresent);
  EXPECT_EQ(Event(2)->decision, SyncDecision::kSkip) << "a forged report counted";
  EXPECT_EQ(Event(3)->decision, SyncDecision::kPresent);
  EXPECT_EQ(client_->ticks_led(), 3u);
}

}  // namespace
}  // namespace tilestream
