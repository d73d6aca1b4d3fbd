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
    ring_[(head_ + size_++) % ring_.size()] = {first + i, now_ns_, now_ns_ + options_.reorder_ns,
                                               0,         0,       false};
  }
  if (tracked > 0) next_due_ns_ = std::min(next_due_ns_, now_ns_ + options_.reorder_ns);
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
  Entry& e = at(lo);
  e.arrived = true;  // leaves the ring when it reaches the front
  if (e.requests == 0) {
    ++stats_.reordered;
  } else if (e.requests == 1 || ++ambiguous_in_a_row_ > kStarvedAnswers) {
    rtt_.Sample(now_ns_ - e.first_request_ns, now_ns_);
    stats_.rtt = rtt_.estimate();
    if (e.requests == 1) ambiguous_in_a_row_ = 0;
  } else {
    ++stats_.ambiguous;
  }
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

void LossTracker::GiveUpBefore(uint64_t sequence) {
  while (size_ > 0 && at(0).sequence < sequence) {
    if (!at(0).arrived) ++stats_.unrecoverable;
    PopFront();
  }
}

// After a packet's `requests`th request: the round trip and two
// deviations once measured (an answer is most likely back by then; a
// frame's deadline cannot wait for TCP's four), else the LAN's doubling
// schedule.
int64_t LossTracker::RetryAfter(uint32_t requests) const {
  if (stats_.rtt.samples > 0)
    return std::max(options_.first_retry_ns, RetryAfterNs(stats_.rtt.rtt_ns, stats_.rtt.rttvar_ns));
  if (hint_.rtt_ns > 0) return RetryAfterNs(hint_.rtt_ns, hint_.rttvar_ns);
  return options_.first_retry_ns << std::min<uint32_t>(requests - 1, 20);
}

void LossTracker::PopFront() {
  head_ = (head_ + 1) % ring_.size();
  --size_;
}

size_t LossTracker::TakeDue(std::span<uint16_t> out) {
  asked_again_ = false;
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
      // A retry whose answer would come after the packet is given up is
      // not sent. A first request always is: its answer is the sample that
      // keeps the estimate true (one slow sample would otherwise stop every
      // request, and with them every sample that could correct it).
      if (e.requests > 0 && now_ns_ + stats_.rtt.rtt_ns > e.found_ns + options_.window_ns) {
        e.requests = options_.max_requests;
        ++stats_.not_asked;
        continue;
      }
      out[n++] = static_cast<uint16_t>(e.sequence);
      if (e.requests == 0) e.first_request_ns = now_ns_;
      if (e.requests > 0) {
        asked_again_ = true;
        ++stats_.asked_again;
      }
      ++e.requests;
      e.due_ns = now_ns_ + RetryAfter(e.requests);
    }
    if (e.requests < options_.max_requests) next_due_ns_ = std::min(next_due_ns_, e.due_ns);
  }
  stats_.requested += n;
  return n;
}

}  // namespace tilestream
