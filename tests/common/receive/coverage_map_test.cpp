#include "common/receive/coverage_map.h"

#include <gtest/gtest.h>

namespace tilestream {
namespace {

TEST(CoverageMap, CountsOnlyPixelsNotCoveredBefore) {
  CoverageMap m(200);
  EXPECT_EQ(m.Mark(10, 100), 100u);
  EXPECT_EQ(m.Mark(60, 100), 50u);  // 60..109 were covered
  EXPECT_EQ(m.Mark(0, 10), 10u);
  EXPECT_EQ(m.covered(), 160u);
  EXPECT_FALSE(m.full());
  EXPECT_EQ(m.Mark(160, 40), 40u);
  EXPECT_TRUE(m.full());
}

TEST(CoverageMap, MarksRangesWithinOneWordAndAcrossMany) {
  CoverageMap m(1000);
  EXPECT_EQ(m.Mark(3, 1), 1u);
  EXPECT_EQ(m.Mark(3, 1), 0u);
  EXPECT_EQ(m.Mark(0, 64), 63u);
  EXPECT_EQ(m.Mark(63, 900), 899u);
  EXPECT_EQ(m.Mark(999, 1), 1u);
  EXPECT_EQ(m.covered(), 964u);
}

TEST(CoverageMap, ClearUncoversUpToTheGivenEnd) {
  CoverageMap m(300);
  m.Mark(0, 130);
  m.Clear(130);
  EXPECT_EQ(m.covered(), 0u);
  EXPECT_EQ(m.Mark(0, 300), 300u);
  EXPECT_TRUE(m.full());
}

}  // namespace
}  // namespace tilestream
