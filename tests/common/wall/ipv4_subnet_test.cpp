#include "common/wall/ipv4_subnet.h"

#include <gtest/gtest.h>

namespace tilestream {
namespace {

TEST(Ipv4Subnet, ContainsTheAddressesUnderItsPrefix) {
  const auto s = Ipv4Subnet::Parse("10.99.0.7/24");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->base, 0x0a630000u) << "the host bits are masked off";
  EXPECT_TRUE(s->Contains(0x0a6300feu));
  EXPECT_FALSE(s->Contains(0x0a630100u));
  EXPECT_TRUE(Ipv4Subnet::Parse("0.0.0.0/0")->Contains(0xc0a80101u));
  EXPECT_FALSE(Ipv4Subnet::Parse("10.0.0.1/32")->Contains(0x0a000002u));
}

TEST(Ipv4Subnet, RefusesWhatIsNotASubnet) {
  for (const char* text : {"", "10.99.0.0", "10.99.0.0/", "10.99.0.0/33", "10.99.0.0/2x",
                           "10.99.0.0/-1", "10.99.0/24", "host/24", "10.99.0.0/024", "::1/64"})
    EXPECT_FALSE(Ipv4Subnet::Parse(text).has_value()) << text;
}

}  // namespace
}  // namespace tilestream
