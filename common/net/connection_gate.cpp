#include "common/net/connection_gate.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "common/base/clock.h"

namespace tilestream {

ConnectionGate::Verdict ConnectionGate::Admit(uint64_t id, std::string_view address, int64_t now,
                                              bool reserved, uint64_t* evicted) {
  *evicted = 0;
  const std::string key(address);
  const uint32_t places = limits_.max_connections + (reserved ? limits_.reserved : 0);
  if (const auto it = per_address_.find(key);
      it != per_address_.end() && it->second >= limits_.max_per_address) {
    // At its own cap the address's first to yield gives its place up: a
    // good client behind the same NAT as a flood of slow ones still gets in.
    *evicted = FirstToYield(&key);
    if (*evicted == 0) return Verdict::kAddressFull;
    Remove(*evicted);
  } else if (entries_.size() >= places) {
    *evicted = FirstToYield();
    if (*evicted == 0) return Verdict::kFull;
    Remove(*evicted);
  }
  entries_[id] = {key, Standing{Yield::kStale, now, kNoDeadline}};
  ++per_address_[key];
  return Verdict::kAdmitted;
}

void ConnectionGate::Stand(uint64_t id, const Standing& standing) {
  if (const auto it = entries_.find(id); it != entries_.end()) it->second.standing = standing;
}

void ConnectionGate::Remove(uint64_t id) {
  const auto it = entries_.find(id);
  if (it == entries_.end()) return;
  const auto a = per_address_.find(it->second.address);
  if (--a->second == 0) per_address_.erase(a);
  entries_.erase(it);
}

void ConnectionGate::Expired(int64_t now, std::vector<uint64_t>* out) const {
  for (const auto& [id, e] : entries_)
    if (e.standing.deadline_ns <= now) out->push_back(id);
}

int64_t ConnectionGate::NextDeadline() const {
  int64_t next = kNoDeadline;
  for (const auto& [id, e] : entries_) next = std::min(next, e.standing.deadline_ns);
  return next;
}

bool ConnectionGate::TakeRequest(std::string_view address, int64_t now) {
  const double rate = limits_.requests_per_second_per_address;
  if (rate == 0) return true;
  const double burst = 2 * rate;
  if (buckets_.size() >= kTidyBuckets) TidyBuckets(now);
  Bucket& b = buckets_.try_emplace(std::string(address), Bucket{burst, now}).first->second;
  b.tokens = std::min(burst, b.tokens + static_cast<double>(now - b.at_ns) * rate / kNsPerSecond);
  b.at_ns = now;
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

// A bucket that has refilled is the same as none: dropped, so the map
// holds only the addresses of the last two seconds. Should more than that
// ask (a flood from as many addresses), every bucket starts again full.
void ConnectionGate::TidyBuckets(int64_t now) {
  const double rate = limits_.requests_per_second_per_address;
  std::erase_if(buckets_, [&](const auto& entry) {
    const Bucket& b = entry.second;
    return b.tokens + static_cast<double>(now - b.at_ns) * rate / kNsPerSecond >= 2 * rate;
  });
  if (buckets_.size() >= kTidyBuckets * 16) buckets_.clear();
}

// Of connections that stand since the same moment (admitted in one batch),
// the last admitted goes first: a burst of newcomers does not push out the
// one before it, whose request is read next.
uint64_t ConnectionGate::FirstToYield(const std::string* of_address) const {
  uint64_t first = 0;
  std::tuple<Yield, int64_t, int64_t> key{Yield::kKept, 0, 0};
  for (const auto& [id, e] : entries_) {
    if (e.standing.yield == Yield::kKept) continue;
    if (of_address && e.address != *of_address) continue;
    const std::tuple k{e.standing.yield, e.standing.since_ns, -static_cast<int64_t>(id)};
    if (first == 0 || k < key) {
      first = id;
      key = k;
    }
  }
  return first;
}

}  // namespace tilestream
