#include "common/receive/loss_tracker.h"

#include <algorithm>

namespace tilestream {

LossTracker::LossTracker(const Options& options) : options_(options) {
  ring_.resize(std::max<size_t>(1, options_.capacity));
}

void LossTracker::Lost(uint64_t first, uint64_t count) {
  const uint64_t room = ring_.size() - size_;
  const uint64_t tracked = std::min(count, room);
  stats_.unrecoverable += count - tracked;
  for (uint64_t i = 0; i < tracked; ++i) {
    ring_[(head_ + size_++) % ring_.size()] = {first + i, now_ns_, now_ns_, 0, false};
  }
  if (tracked > 0) next_due_ns_ = std::min(next_due_ns_, now_ns_);
}

bool LossTracker::Arrived(uint64_t sequence) {
  if (size_ == 0 || sequence < at(0).sequence || sequence > at(size_ - 1).sequence) return false;
  // Ascending: binary search.
  size_t lo = 0, hi = size_;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (at(mid).sequence < sequence)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == size_ || at(lo).sequence != sequence || at(lo).arrived) return false;
  at(lo).arrived = true;  // leaves the ring when it reaches the front
  while (size_ > 0 && at(0).arrived) PopFront();
  return true;
}

void LossTracker::Forget() {
  while (size_ > 0) {
    if (!at(0).arrived) ++stats_.unrecoverable;
    PopFront();
  }
  next_due_ns_ = kNever;
}

void LossTracker::PopFront() {
  head_ = (head_ + 1) % ring_.size();
  --size_;
}

size_t LossTracker::TakeDue(std::span<uint16_t> out) {
  if (now_ns_ < next_due_ns_) return 0;
  // Given up past the window: found in order, so they are a prefix.
  while (size_ > 0 && (at(0).arrived || now_ns_ - at(0).found_ns >= options_.window_ns)) {
    if (!at(0).arrived) ++stats_.unrecoverable;
    PopFront();
  }
  size_t n = 0;
  next_due_ns_ = size_ ? at(0).found_ns + options_.window_ns : kNever;
  for (size_t i = 0; i < size_; ++i) {
    Entry& e = at(i);
    if (e.arrived || e.requests >= options_.max_requests) continue;
    if (e.due_ns <= now_ns_ && n < out.size()) {
      out[n++] = static_cast<uint16_t>(e.sequence);
      e.due_ns = now_ns_ + (options_.first_retry_ns << std::min<uint32_t>(e.requests, 20));
      ++e.requests;
    }
    if (e.requests < options_.max_requests) next_due_ns_ = std::min(next_due_ns_, e.due_ns);
  }
  stats_.requested += n;
  return n;
}

}  // namespace tilestream
