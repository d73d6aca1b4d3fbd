#include "common/net/http_gate.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "common/base/clock.h"

namespace tilestream {

HttpGate::Verdict HttpGate::Admit(uint64_t id, std::string_view address, int64_t now,
                                  uint64_t* evicted) {
  *evicted = 0;
  const std::string key(address);
  if (const auto it = per_address_.find(key);
      it != per_address_.end() && it->second >= limits_.max_connections_per_address) {
    // At its own cap the address's stalest gives its place up: a good
    // client behind the same NAT as a flood of slow ones still gets in.
    *evicted = Stalest(&key);
    if (*evicted == 0) return Verdict::kAddressFull;
    Remove(*evicted);
  } else if (entries_.size() >= limits_.max_connections) {
    *evicted = Stalest();
    if (*evicted == 0) return Verdict::kFull;
    Remove(*evicted);
  }
  entries_[id] = {key, HttpPhase::kHead, now, DeadlineOf(HttpPhase::kHead, now, now)};
  ++per_address_[key];
  return Verdict::kAdmitted;
}

void HttpGate::Enter(uint64_t id, HttpPhase phase, int64_t now) {
  const auto it = entries_.find(id);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  // The body's deadline counts from the request's start, as the head's.
  if (phase != HttpPhase::kBody) e.since_ns = now;
  e.phase = phase;
  e.deadline_ns = DeadlineOf(phase, e.since_ns, now);
}

void HttpGate::Remove(uint64_t id) {
  const auto it = entries_.find(id);
  if (it == entries_.end()) return;
  const auto a = per_address_.find(it->second.address);
  if (--a->second == 0) per_address_.erase(a);
  entries_.erase(it);
}

void HttpGate::Expired(int64_t now, std::vector<uint64_t>* out) const {
  for (const auto& [id, e] : entries_)
    if (e.deadline_ns <= now) out->push_back(id);
}

int64_t HttpGate::NextDeadline() const {
  int64_t next = kNever;
  for (const auto& [id, e] : entries_) next = std::min(next, e.deadline_ns);
  return next;
}

bool HttpGate::TakeRequest(std::string_view address, int64_t now) {
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
void HttpGate::TidyBuckets(int64_t now) {
  const double rate = limits_.requests_per_second_per_address;
  std::erase_if(buckets_, [&](const auto& entry) {
    const Bucket& b = entry.second;
    return b.tokens + static_cast<double>(now - b.at_ns) * rate / kNsPerSecond >= 2 * rate;
  });
  if (buckets_.size() >= kTidyBuckets * 16) buckets_.clear();
}

int64_t HttpGate::DeadlineOf(HttpPhase phase, int64_t since, int64_t now) const {
  const int64_t whole = int64_t{limits_.timeout_s} * kNsPerSecond;
  switch (phase) {
    case HttpPhase::kHead:
      return since + std::min(int64_t{limits_.header_timeout_ms} * kNsPerMs, whole);
    case HttpPhase::kBody:
      return since + whole;
    case HttpPhase::kServing:
      return kNever;
    case HttpPhase::kWriting:
      return now + whole;
    case HttpPhase::kIdle:
      return now + int64_t{limits_.keep_alive_s} * kNsPerSecond;
    case HttpPhase::kDraining:
      return now + kDrainNs;
  }
  return kNever;
}

// Draining connections first (their reply is out), then the one that has
// waited longest for its request or its next one. Connections being served
// or written to keep their place: their deadline bounds them.
// Of connections that started at the same moment (accepted in one batch),
// the last accepted goes first: a burst of newcomers does not push out the
// one before it, whose request is read next.
uint64_t HttpGate::Stalest(const std::string* of_address) const {
  uint64_t stalest = 0;
  std::tuple<int, int64_t, int64_t> key{2, 0, 0};
  for (const auto& [id, e] : entries_) {
    if (e.phase == HttpPhase::kServing || e.phase == HttpPhase::kWriting) continue;
    if (of_address && e.address != *of_address) continue;
    const std::tuple<int, int64_t, int64_t> k{e.phase == HttpPhase::kDraining ? 0 : 1, e.since_ns,
                                              -static_cast<int64_t>(id)};
    if (stalest == 0 || k < key) {
      stalest = id;
      key = k;
    }
  }
  return stalest;
}

}  // namespace tilestream
