#include "common/receive/coverage_map.h"

#include <algorithm>
#include <bit>
#include <cassert>

namespace tilestream {

size_t CoverageMap::Mark(size_t first, size_t count) {
  assert(first + count <= pixels_);
  size_t added = 0;
  size_t bit = first;
  const size_t end = first + count;
  while (bit < end) {
    const size_t word = bit / 64, shift = bit % 64;
    const size_t n = std::min<size_t>(64 - shift, end - bit);
    const uint64_t mask = (n == 64 ? ~uint64_t{0} : ((uint64_t{1} << n) - 1)) << shift;
    added += static_cast<size_t>(std::popcount(mask & ~words_[word]));
    words_[word] |= mask;
    bit += n;
  }
  covered_ += added;
  return added;
}

void CoverageMap::Clear(size_t end) {
  std::fill(words_.begin(),
            words_.begin() + static_cast<std::ptrdiff_t>((std::min(end, pixels_) + 63) / 64), 0);
  covered_ = 0;
}

}  // namespace tilestream
