#include "tools/wallcut/progress.h"

#include <gtest/gtest.h>

namespace tilestream {
namespace {

TEST(ProgressBar, ShowsFractionRateAndEta) {
  EXPECT_EQ(ProgressBar::Render("cutting", 25, 100, "frames", 50'000'000, 10, 8),
            "cutting [##------]  25% 25/100 frames  5.0 MB/s  0:10  ETA 0:30");
}

TEST(ProgressBar, WithoutTotalShowsCountOnly) {
  EXPECT_EQ(ProgressBar::Render("reading", 7, 0, "frames", 0, 3725, 8),
            "reading 7 frames  0.0 MB/s  1:02:05");
}

TEST(ProgressBar, SilentWhenNotInteractiveUntilFinish) {
  char buf[512] = {};
  FILE* f = fmemopen(buf, sizeof buf, "w");
  ProgressBar bar("x", 10, "frames", f, false);
  bar.Update(5, 100);
  std::fflush(f);
  EXPECT_STREQ(buf, "");
  bar.Finish(10, 100);
  std::fclose(f);
  EXPECT_NE(std::string(buf).find("100% 10/10 frames"), std::string::npos);
}

}  // namespace
}  // namespace tilestream
