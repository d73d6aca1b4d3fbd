#include "common/receive/coverage_map.h"

#include <algorithm>
#include <bit>
#include <cassert>

namespace tilestream {

namespace {

// Sets `mask`'s bits of `word`; returns how many were clear.
size_t SetBits(uint64_t* word, uint64_t mask) {
  const uint64_t fresh = mask & ~*word;
  *word |= mask;
  // Most words a packet covers are new: skip the count (the build has no
  // popcnt instruction, so std::popcount is a libgcc call).
  return fresh == ~uint64_t{0} ? 64 : static_cast<size_t>(std::popcount(fresh));
}

uint64_t BitsFrom(size_t shift) { return ~uint64_t{0} << shift; }  // shift < 64
uint64_t BitsBelow(size_t n) { return n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1; }  // n <= 64

}  // namespace

size_t CoverageMap::Mark(size_t first, size_t count) {
  assert(first + count <= pixels_);
  if (count == 0) return 0;
  const size_t end = first + count, head = first / 64, tail = (end - 1) / 64;
  size_t added;
  if (head == tail) {
    added = SetBits(&words_[head], BitsFrom(first % 64) & BitsBelow(end - head * 64));
  } else {
    added = SetBits(&words_[head], BitsFrom(first % 64));
    for (size_t w = head + 1; w < tail; ++w) added += SetBits(&words_[w], ~uint64_t{0});
    added += SetBits(&words_[tail], BitsBelow(end - tail * 64));
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
