#include "common/base/words.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace tilestream {
namespace {

TEST(Words, SpacesAndTabsSeparateAndRunsCountAsOne) {
  std::array<std::string_view, 4> w;
  size_t n = 0;
  ASSERT_TRUE(SplitWords(std::string_view(" seek\t 42  \t"), &w, &n));
  ASSERT_EQ(n, 2u);
  EXPECT_EQ(w[0], "seek");
  EXPECT_EQ(w[1], "42");
  ASSERT_TRUE(SplitWords(std::string_view(""), &w, &n));
  EXPECT_EQ(n, 0u);
}

TEST(Words, MoreWordsThanRoomIsRefused) {
  std::array<std::string_view, 2> w;
  size_t n = 0;
  EXPECT_TRUE(SplitWords(std::string_view("a b"), &w, &n));
  EXPECT_FALSE(SplitWords(std::string_view("a b c"), &w, &n));
}

TEST(Words, FirstWordAndTheRest) {
  const auto [word, rest] = SplitFirstWord("\t auth  my secret ");
  EXPECT_EQ(word, "auth");
  EXPECT_EQ(rest, "my secret ");
  const auto [none, nothing] = SplitFirstWord("   ");
  EXPECT_EQ(none, "");
  EXPECT_EQ(nothing, "");
}

TEST(Words, TrimTakesBlanksAndALineEndsCarriageReturn) {
  EXPECT_EQ(TrimBlanks(" \tm=video 5004\t\r"), "m=video 5004");
  EXPECT_EQ(TrimBlanks("\r"), "");
}

TEST(Words, IntegersAreWholeAndInRange) {
  uint32_t u = 0;
  EXPECT_TRUE(ParseInteger("4294967295", &u));
  EXPECT_EQ(u, 4294967295u);
  EXPECT_FALSE(ParseInteger("4294967296", &u));
  EXPECT_FALSE(ParseInteger("-1", &u));
  EXPECT_FALSE(ParseInteger("+1", &u));
  EXPECT_FALSE(ParseInteger("12x", &u));
  EXPECT_FALSE(ParseInteger(" 12", &u));
  EXPECT_FALSE(ParseInteger("0x10", &u));
  EXPECT_FALSE(ParseInteger("", &u));
  int64_t i = 0;
  EXPECT_TRUE(ParseInteger("-9000000000", &i));
  EXPECT_EQ(i, -9000000000);
  uint8_t b = 0;
  EXPECT_FALSE(ParseInteger("256", &b));
}

TEST(Words, RealsAreWholeAndFinite) {
  double d = 0;
  EXPECT_TRUE(ParseReal("-0.25", &d));
  EXPECT_DOUBLE_EQ(d, -0.25);
  EXPECT_TRUE(ParseReal("30000", &d));
  EXPECT_FALSE(ParseReal("inf", &d));
  EXPECT_FALSE(ParseReal("nan", &d));
  EXPECT_FALSE(ParseReal("1e999", &d));
  EXPECT_FALSE(ParseReal("1.5s", &d));
  EXPECT_FALSE(ParseReal("", &d));
}

}  // namespace
}  // namespace tilestream
