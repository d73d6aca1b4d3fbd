// The log of refused sends (streamer/refusal_log.h): a line when a kind
// starts, one a minute while it lasts, one when a minute passed without.
#include "streamer/refusal_log.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace tilestream {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

class RefusalLogTest : public ::testing::Test {
 protected:
  std::vector<RefusalLog::Line> LookAt(int64_t seconds, size_t tile = 0) {
    std::vector<RefusalLog::Line> lines;
    log_.Look(tile, tile == 0 ? "r0c0" : "r0c1", counts_[tile], seconds * kSecond, &lines);
    return lines;
  }
  RefusalLog log_{2};
  RefusalCounts counts_[2];
};

TEST_F(RefusalLogTest, SaysNothingWhileNothingIsRefused) {
  for (int64_t s = 0; s < 200; ++s) EXPECT_TRUE(LookAt(s).empty());
}

TEST_F(RefusalLogTest, OneLineWhenAKindStartsOneAMinuteWhileItLastsOneWhenItStops) {
  counts_[0].Add(EPERM, 7);
  auto lines = LookAt(1);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(lines[0].warning);
  EXPECT_EQ(lines[0].text,
            "tile r0c0: the kernel refuses sends with EPERM (Operation not permitted): 7 "
            "datagrams so far; the receivers ask for them again like lost ones");
  for (int64_t s = 2; s < 61; ++s) {
    counts_[0].Add(EPERM, 10);
    EXPECT_TRUE(LookAt(s).empty()) << s;
  }
  counts_[0].Add(EPERM, 10);
  lines = LookAt(61);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(lines[0].warning);
  EXPECT_EQ(lines[0].text,
            "tile r0c0: EPERM (Operation not permitted) go on: 600 datagrams refused in the last "
            "60 s, 607 in all");
  for (int64_t s = 62; s < 121; ++s) EXPECT_TRUE(LookAt(s).empty()) << s;
  lines = LookAt(121);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_FALSE(lines[0].warning);
  EXPECT_EQ(lines[0].text,
            "tile r0c0: no EPERM (Operation not permitted) for 60 s (607 datagrams in all)");
  EXPECT_TRUE(LookAt(500).empty());
  counts_[0].Add(EPERM, 2);
  lines = LookAt(501);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].text.find(": 2 datagrams so far"), std::string::npos) << lines[0].text;
}

TEST_F(RefusalLogTest, EachTileAndEachKindHasItsOwnLine) {
  counts_[0].Add(ECONNREFUSED, 1);
  counts_[0].Add(ENETDOWN, 3);
  counts_[1].Add(12345, 2);
  EXPECT_EQ(LookAt(1, 0).size(), 2u);
  const auto other = LookAt(1, 1);
  ASSERT_EQ(other.size(), 1u);
  EXPECT_NE(other[0].text.find("tile r0c1: the kernel refuses sends with errors of other kinds"),
            std::string::npos)
      << other[0].text;
}

}  // namespace
}  // namespace tilestream
