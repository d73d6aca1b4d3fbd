// The doorbell (streamer/doorbell.h): where a rank listens, and rings that
// arrive with their sequence, only at armed ranks, one sendmmsg for all.
#include "streamer/doorbell.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <string>

#include "tests/support/two_servers.h"

namespace tilestream {
namespace {

using testing::TwoServers;

in_addr Loopback() { return in_addr{htonl(INADDR_LOOPBACK)}; }

uint32_t ATileOfServer(const WallConfig& c, uint32_t server) {
  for (uint32_t t = 0; t < c.routes.size(); ++t)
    if (c.routes[t].server == server) return t;
  ADD_FAILURE() << "server " << server << " has no tile";
  return 0;
}

// Waits up to 10 s for the listener's socket to have something.
bool Rang(const DoorbellListener& d) {
  pollfd p{d.fd(), POLLIN, 0};
  return poll(&p, 1, 10'000) == 1;
}

TEST(Doorbell, ARankOnTheCoordinatorsHostListensOnLoopback) {
  const WallConfig one = *ParseWallConfig(
      "[wall]\ncolumns = 2\nrows = 1\ntile_width = 64\ntile_height = 32\n[[node]]\nname = "
      "\"n\"\naddress = \"127.0.0.1\"\ntiles = [\"r0c0\", \"r0c1\"]\n",
      "one.toml");
  ASSERT_TRUE(DoorbellAddress(one, 1).has_value());
  EXPECT_EQ(ntohl(DoorbellAddress(one, 1)->s_addr), INADDR_LOOPBACK);
  const WallConfig two = TwoServers();
  ASSERT_TRUE(DoorbellAddress(two, ATileOfServer(two, 0)).has_value());
  EXPECT_EQ(ntohl(DoorbellAddress(two, ATileOfServer(two, 0))->s_addr), INADDR_LOOPBACK)
      << "the coordinator runs on the first server";
}

TEST(Doorbell, ARankOnAnotherServerListensOnTheManagementNetworkOrHasNone) {
  WallConfig c = TwoServers();
  const uint32_t tile = ATileOfServer(c, 1);
  EXPECT_FALSE(DoorbellAddress(c, tile).has_value()) << "this host has no 10.99.0.0/24 address";
  c.mpi.network = "127.0.0.0/8";  // an address every host has
  ASSERT_TRUE(DoorbellAddress(c, tile).has_value());
  EXPECT_EQ(ntohl(DoorbellAddress(c, tile)->s_addr) >> 24, 127u);
  c.mpi.network = "";
  EXPECT_FALSE(DoorbellAddress(c, tile).has_value()) << "no management network: the rank polls";
}

TEST(Doorbell, ARingCarriesItsSequenceToEveryArmedRankAndNoOther) {
  auto a = DoorbellListener::Open(Loopback());
  auto b = DoorbellListener::Open(Loopback());
  auto unarmed = DoorbellListener::Open(Loopback());
  ASSERT_TRUE(a.ok() && b.ok() && unarmed.ok());
  EXPECT_NE(a->port(), 0);
  auto ringer = DoorbellRinger::Open(4);
  ASSERT_TRUE(ringer.ok());
  ringer->Arm(1, a->address(), a->port());
  ringer->Arm(3, b->address(), b->port());
  ringer->Arm(0, unarmed->address(), unarmed->port());  // rank 0 is the coordinator itself
  EXPECT_TRUE(ringer->armed(1));
  EXPECT_FALSE(ringer->armed(2));
  EXPECT_FALSE(ringer->armed(0));

  ringer->Ring(7, 3);
  ASSERT_TRUE(Rang(*a));
  ASSERT_TRUE(Rang(*b));
  EXPECT_EQ(a->Drain(), 7u);
  EXPECT_EQ(b->Drain(), 7u);
  EXPECT_EQ(a->Drain(), 0u) << "drained";
  EXPECT_EQ(unarmed->Drain(), 0u);

  ringer->Ring(8, 1);  // ranks up to 1 only
  ringer->Ring(9, 1);
  ASSERT_TRUE(Rang(*a));
  EXPECT_EQ(a->Drain(), 9u) << "the highest of the rings waiting";
  EXPECT_EQ(b->Drain(), 0u) << "rank 3 was past `last`";
  EXPECT_EQ(ringer->failures(), 0u);
}

TEST(Doorbell, ADatagramThatIsNotARingWakesButCarriesNoSequence) {
  auto d = DoorbellListener::Open(Loopback());
  ASSERT_TRUE(d.ok());
  const int s = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr = d->address();
  to.sin_port = htons(d->port());
  const std::string junk(100, 'x');
  for (int i = 0; i < 100; ++i)  // more than one Drain reads
    sendto(s, junk.data(), i % 2 ? junk.size() : 3, 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
  close(s);
  ASSERT_TRUE(Rang(*d));
  EXPECT_EQ(d->Drain(), 0u);
  EXPECT_EQ(d->Drain(), 0u) << "the rest, bounded per call";
  pollfd p{d->fd(), POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 0) << "two drains took all 100";
}

}  // namespace
}  // namespace tilestream
