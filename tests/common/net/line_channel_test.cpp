#include "common/net/line_channel.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

namespace tilestream {
namespace {

// A connected pair over loopback: (client, server side).
std::pair<LineChannel, LineChannel> Pair() {
  auto listener = ListenTcp("127.0.0.1", 0);
  EXPECT_TRUE(listener.ok()) << listener.status().message();
  sockaddr_in a{};
  socklen_t len = sizeof a;
  getsockname(listener->get(), reinterpret_cast<sockaddr*>(&a), &len);
  auto client = ConnectTcp("127.0.0.1", ntohs(a.sin_port), 1000);
  EXPECT_TRUE(client.ok()) << client.status().message();
  pollfd p{listener->get(), POLLIN, 0};
  poll(&p, 1, 1000);
  UniqueFd server(accept(listener->get(), nullptr, nullptr));
  return {LineChannel(std::move(client).value()), LineChannel(std::move(server))};
}

// Receives until a line is there or a second passed.
std::optional<std::string> WaitLine(LineChannel* c) {
  for (int i = 0; i < 100; ++i) {
    if (auto line = c->NextLine()) return line;
    pollfd p{c->fd(), POLLIN, 0};
    poll(&p, 1, 10);
    if (!c->Receive()) return c->NextLine();
  }
  return std::nullopt;
}

TEST(LineChannel, CarriesLinesBothWays) {
  auto [client, server] = Pair();
  ASSERT_TRUE(client.Send("status"));
  ASSERT_TRUE(client.Send("seek 42"));
  EXPECT_EQ(WaitLine(&server), "status");
  EXPECT_EQ(WaitLine(&server), "seek 42");
  ASSERT_TRUE(server.Send("{\"ok\":true}"));
  EXPECT_EQ(WaitLine(&client), "{\"ok\":true}");
}

TEST(LineChannel, JoinsLinesSplitAcrossReadsAndDropsCarriageReturns) {
  auto [client, server] = Pair();
  send(client.fd(), "pl", 2, 0);
  EXPECT_EQ(WaitLine(&server), std::nullopt);
  send(client.fd(), "ay\r\npause\n", 10, 0);
  EXPECT_EQ(WaitLine(&server), "play");
  EXPECT_EQ(WaitLine(&server), "pause");
}

TEST(LineChannel, ALoneCarriageReturnEndsALineAndCrLfEndsOnlyOne) {
  auto [client, server] = Pair();
  send(client.fd(), "play\rpause\r", 11, 0);
  EXPECT_EQ(WaitLine(&server), "play");
  EXPECT_EQ(WaitLine(&server), "pause");
  send(client.fd(), "\nstatus\r", 8, 0);  // the \n completes the CRLF split across reads
  EXPECT_EQ(WaitLine(&server), "status");
  send(client.fd(), "\n\nhelp\n", 7, 0);  // an empty line is a line
  EXPECT_EQ(WaitLine(&server), "");
  EXPECT_EQ(WaitLine(&server), "help");
}

TEST(LineChannel, ClosesOnALineOverTheLimit) {
  auto [client, server] = Pair();
  const std::string huge(kMaxLineBytes + 100, 'x');
  send(client.fd(), huge.data(), huge.size(), 0);
  EXPECT_EQ(WaitLine(&server), std::nullopt);
  EXPECT_FALSE(server.open());
  EXPECT_EQ(server.why(), "line too long");
}

TEST(LineChannel, ReportsThePeerClosing) {
  auto [client, server] = Pair();
  client.Send("bye");
  client.Close("done");
  EXPECT_EQ(WaitLine(&server), "bye");
  EXPECT_EQ(WaitLine(&server), std::nullopt);
  EXPECT_FALSE(server.open());
  EXPECT_EQ(server.why(), "peer closed");
}

TEST(LineChannel, ConnectToNothingFails) {
  auto listener = ListenTcp("127.0.0.1", 0);
  ASSERT_TRUE(listener.ok());
  sockaddr_in a{};
  socklen_t len = sizeof a;
  getsockname(listener->get(), reinterpret_cast<sockaddr*>(&a), &len);
  const uint16_t port = ntohs(a.sin_port);
  listener->reset();
  EXPECT_FALSE(ConnectTcp("127.0.0.1", port, 1000).ok());
}

}  // namespace
}  // namespace tilestream
