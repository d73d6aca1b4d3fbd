// Link and address events of a real interface (common/net/link_watch.h):
// a veth pair made in the root namespace (root only; skipped otherwise),
// with the processes `ip` runs: an integration test, not a unit test.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "common/net/link_watch.h"

namespace tilestream {
namespace {

// As root: a veth pair made, brought up, given an address, taken down and
// removed; each change is an event, and its state reads right.
TEST(LinkEvents, SeesALinkGoUpAndDownAndItsAddressComeAndGo) {
  if (geteuid() != 0) GTEST_SKIP() << "making an interface needs root";
  const auto ip = [](const std::string& args) {
    return std::system(("ip " + args + " 2>/dev/null").c_str()) == 0;
  };
  ip("link del tswatch0");
  auto w = LinkWatch::Open();
  ASSERT_TRUE(w.ok()) << w.status().message();
  w->Changed();  // whatever came before
  // A change is an event; the state it leads to may follow in a later one
  // (a veth's carrier comes up a moment after the link is set up), so each
  // check waits, within a bound, for events until the state reads `want`.
  const auto settles = [&](const std::string& address, bool want) {
    bool seen = false;
    for (int i = 0; i < 300; ++i) {
      seen = w->Changed() || seen;
      if (seen && NicUsable("tswatch0", address) == want) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  };
  if (!ip("link add tswatch0 type veth peer name tswatch1")) GTEST_SKIP() << "no veth here";
  EXPECT_TRUE(settles("", false)) << "made, down";
  ASSERT_TRUE(ip("addr add 10.251.0.1/32 dev tswatch0"));
  ASSERT_TRUE(ip("link set tswatch1 up"));
  ASSERT_TRUE(ip("link set tswatch0 up"));
  EXPECT_TRUE(settles("10.251.0.1", true)) << "up, with its address";
  ASSERT_TRUE(ip("addr del 10.251.0.1/32 dev tswatch0"));
  EXPECT_TRUE(settles("10.251.0.1", false)) << "its address gone";
  ASSERT_TRUE(ip("link set tswatch1 down"));  // the cable: no carrier
  EXPECT_TRUE(settles("", false)) << "no carrier";
  ASSERT_TRUE(ip("link set tswatch1 up"));
  EXPECT_TRUE(settles("", true)) << "carrier back";
  ip("link del tswatch0");
  EXPECT_FALSE(w->Changed() && NicUsable("tswatch0", ""));
}

}  // namespace
}  // namespace tilestream
