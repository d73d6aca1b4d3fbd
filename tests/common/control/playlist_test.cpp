#include "common/control/playlist.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace tilestream {
namespace {

TEST(Playlist, WalksForwardAndBackAndWrapsOnlyWhenAsked) {
  Playlist p;
  EXPECT_FALSE(p.After(true));
  ASSERT_TRUE(p.Queue("a").ok());
  ASSERT_TRUE(p.Queue("b").ok());
  ASSERT_TRUE(p.Queue("c").ok());
  EXPECT_EQ(p.After(false), "a") << "the movie playing is not in the list: its first";
  EXPECT_FALSE(p.Before(true));
  p.Playing("b");
  EXPECT_EQ(p.current(), 1);
  EXPECT_EQ(p.After(false), "c");
  EXPECT_EQ(p.Before(false), "a");
  p.Playing("c");
  EXPECT_FALSE(p.After(false));
  EXPECT_EQ(p.After(true), "a");
  p.Playing("a");
  EXPECT_FALSE(p.Before(false));
  EXPECT_EQ(p.Before(true), "c");
  p.Playing("elsewhere");
  EXPECT_EQ(p.current(), -1);
}

TEST(Playlist, AMovieListedTwiceIsFoundFromWhereTheListIs) {
  Playlist p;
  for (const char* name : {"a", "b", "a"}) ASSERT_TRUE(p.Queue(name).ok());
  p.Playing("a");
  EXPECT_EQ(p.current(), 0);
  p.Playing("b");
  p.Playing("a");
  EXPECT_EQ(p.current(), 2) << "the a after b, not the first";
  EXPECT_EQ(p.After(true), "a");
}

TEST(Playlist, HoldsABoundedNumberOfMovies) {
  Playlist p;
  for (size_t i = 0; i < Playlist::kMaxMovies; ++i) ASSERT_TRUE(p.Queue("m").ok());
  EXPECT_THAT(p.Queue("m").message(), ::testing::HasSubstr("at most"));
  p.Clear();
  EXPECT_TRUE(p.empty());
  EXPECT_EQ(p.ToJson()["current"], -1);
}

}  // namespace
}  // namespace tilestream
