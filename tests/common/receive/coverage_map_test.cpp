#include "common/receive/coverage_map.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

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

// Against a bool per pixel, over ranges of every alignment: in one word,
// across two, across many, ending on a word's last bit.
TEST(CoverageMap, CountsWhatABoolPerPixelCounts) {
  constexpr size_t kPixels = 1000;
  std::mt19937 random(7);
  for (int round = 0; round < 50; ++round) {
    CoverageMap m(kPixels);
    std::vector<bool> covered(kPixels, false);
    size_t total = 0;
    for (int mark = 0; mark < 40; ++mark) {
      const size_t first = random() % kPixels;
      const size_t count = random() % (kPixels - first + 1);
      size_t fresh = 0;
      for (size_t p = first; p < first + count; ++p) {
        fresh += !covered[p];
        covered[p] = true;
      }
      total += fresh;
      ASSERT_EQ(m.Mark(first, count), fresh)
          << "round " << round << " [" << first << ", +" << count;
      ASSERT_EQ(m.covered(), total);
    }
  }
}

}  // namespace
}  // namespace tilestream
