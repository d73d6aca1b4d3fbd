// This host's interfaces as NIC failover sees them (common/net/link_watch.h).
#include "common/net/link_watch.h"

#include <gtest/gtest.h>

namespace tilestream {
namespace {

TEST(LinkWatch, LoopbackIsUsableWithItsAddressAndNotWithAnother) {
  EXPECT_TRUE(NicUsable("lo", "127.0.0.1"));
  EXPECT_TRUE(NicUsable("lo", ""));
  EXPECT_FALSE(NicUsable("lo", "10.99.98.97")) << "an address it does not hold";
  EXPECT_FALSE(NicUsable("nosuchnic0", "")) << "no such interface";
  EXPECT_TRUE(NicUsable("default", "127.0.0.1")) << "no interface of its own: the address";
  EXPECT_FALSE(NicUsable("default", "10.99.98.97"));
}

}  // namespace
}  // namespace tilestream
