#include "common/control/skew_histogram.h"

#include <algorithm>
#include <cmath>

namespace tilestream {

void SkewHistogram::Add(int64_t ns) {
  const auto bucket = static_cast<size_t>(std::clamp<int64_t>(ns / kBucketNs, 0, kBuckets - 1));
  ++counts_[bucket];
  ++count_;
}

int64_t SkewHistogram::QuantileNs(double q) const {
  if (count_ == 0) return 0;
  // The k-th smallest sample (1-based), k = ceil(q * count), at least 1.
  const auto k =
      std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(std::clamp(q, 0.0, 1.0) * count_)));
  uint64_t seen = 0;
  for (size_t b = 0; b < kBuckets; ++b) {
    seen += counts_[b];
    if (seen >= k) return static_cast<int64_t>(b + 1) * kBucketNs;
  }
  return static_cast<int64_t>(kBuckets) * kBucketNs;
}

uint64_t SkewHistogram::CountBelowNs(int64_t ns) const {
  const auto end = static_cast<size_t>(std::clamp<int64_t>(ns / kBucketNs, 0, kBuckets));
  uint64_t n = 0;
  for (size_t b = 0; b < end; ++b) n += counts_[b];
  return n;
}

}  // namespace tilestream
