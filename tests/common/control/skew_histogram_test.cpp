#include "common/control/skew_histogram.h"

#include <gtest/gtest.h>

namespace tilestream {
namespace {

TEST(SkewHistogram, QuantilesAreTheBucketEdgeOfTheKthSample) {
  SkewHistogram h;
  EXPECT_EQ(h.QuantileNs(0.5), 0);
  for (int i = 1; i <= 100; ++i) h.Add(i * 100'000);  // 0.1 .. 10 ms
  EXPECT_EQ(h.count(), 100u);
  EXPECT_EQ(h.QuantileNs(0.5), 5'000'000 + SkewHistogram::kBucketNs);   // the 50th: 5 ms
  EXPECT_EQ(h.QuantileNs(0.99), 9'900'000 + SkewHistogram::kBucketNs);  // the 99th: 9.9 ms
  EXPECT_EQ(h.QuantileNs(0), 100'000 + SkewHistogram::kBucketNs);       // the smallest
  EXPECT_EQ(h.QuantileNs(1), 10'000'000 + SkewHistogram::kBucketNs);
}

TEST(SkewHistogram, NegativeAndHugeSamplesLandInTheEndBuckets) {
  SkewHistogram h;
  h.Add(-5);
  h.Add(int64_t{1} << 50);
  EXPECT_EQ(h.QuantileNs(0.5), SkewHistogram::kBucketNs);
  EXPECT_EQ(h.QuantileNs(1),
            SkewHistogram::kBucketNs * static_cast<int64_t>(SkewHistogram::kBuckets));
}

// Prometheus' cumulative buckets: samples below each bound.
TEST(SkewHistogram, CountsBelowABoundAreCumulative) {
  SkewHistogram h;
  for (const int64_t ns : {5'000, 15'000, 400'000, 999'999, 1'000'000, 200'000'000}) h.Add(ns);
  EXPECT_EQ(h.CountBelowNs(0), 0u);
  EXPECT_EQ(h.CountBelowNs(10'000), 1u);
  EXPECT_EQ(h.CountBelowNs(500'000), 3u);
  EXPECT_EQ(h.CountBelowNs(1'000'000), 4u);
  EXPECT_EQ(h.CountBelowNs(2'000'000), 5u);
  EXPECT_EQ(h.CountBelowNs(100'000'000), 6u) << "beyond 100 ms lands in the last bucket";
}

}  // namespace
}  // namespace tilestream
