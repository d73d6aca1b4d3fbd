// Quantiles of a stream of durations in constant memory: a histogram of
// 10-microsecond buckets up to 100 ms (80 KB), so a wall that runs for
// days reports its skew percentiles without keeping every sample (the
// vector it replaced grew 20 MB a day at 30 fps: found by
// bench/memory_soak.sh). Samples beyond 100 ms land in the last bucket;
// callers keep the exact maximum themselves. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tilestream {

class SkewHistogram {
 public:
  static constexpr int64_t kBucketNs = 10'000;
  static constexpr size_t kBuckets = 10'000;  // 0 .. 100 ms

  SkewHistogram() : counts_(kBuckets, 0) {}

  void Add(int64_t ns);
  uint64_t count() const { return count_; }
  // The q-quantile (0..1) in nanoseconds, as the upper edge of its bucket
  // (at most 10 us high); 0 when empty.
  int64_t QuantileNs(double q) const;
  // Samples below `ns` (rounded down to a bucket edge): a Prometheus
  // histogram's cumulative bucket.
  uint64_t CountBelowNs(int64_t ns) const;

 private:
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
};

}  // namespace tilestream
