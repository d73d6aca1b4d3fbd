#include "common/wall/server_hosts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/two_servers.h"

namespace tilestream {
namespace {

using ::testing::HasSubstr;
using testing::TwoServers;

TEST(ServerHosts, AShortNameIsTheSameHostAsItsLongOne) {
  EXPECT_TRUE(SameHost("stream1", "stream1"));
  EXPECT_TRUE(SameHost("stream1", "stream1.lab.example.org"));
  EXPECT_TRUE(SameHost("STREAM1.lab.example.org", "stream1"));
  EXPECT_FALSE(SameHost("stream1", "stream10"));
  EXPECT_FALSE(SameHost("stream1.lab.org", "stream1.other.org"));
  EXPECT_FALSE(SameHost("", "stream1"));
}

TEST(ServerHosts, AHostIsItsServerOrNone) {
  const WallConfig c = TwoServers();
  EXPECT_EQ(ServerOfHost(c, "stream1"), 0);
  EXPECT_EQ(ServerOfHost(c, "stream2.lab.org"), 1);
  EXPECT_EQ(ServerOfHost(c, "laptop"), -1);
  EXPECT_EQ(ServerOfHost(DefaultWallConfig({2, 1}), "laptop"), 0)
      << "an unnamed server is any host";
}

TEST(ServerHosts, ARelativeMovieIsInTheServersStore) {
  const WallConfig c = TwoServers();
  EXPECT_EQ(*MovieOnThisHost(c, "cosmic", "stream2"), "/data/two/cosmic");
  EXPECT_EQ(*MovieOnThisHost(c, "cosmic", "stream1"), "/data/one/cosmic");
  EXPECT_EQ(*MovieOnThisHost(c, "/movies/cosmic", "stream2"), "/movies/cosmic");
  EXPECT_EQ(*MovieOnThisHost(DefaultWallConfig({2, 1}), "cosmic", "laptop"), "cosmic");
  const auto elsewhere = MovieOnThisHost(c, "cosmic", "laptop");
  ASSERT_FALSE(elsewhere.ok());
  EXPECT_THAT(elsewhere.status().message(),
              HasSubstr("this host ('laptop') is none of the wall's servers (stream1, stream2)"));
}

}  // namespace
}  // namespace tilestream
