#include "common/control/swap_sync.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <climits>
#include <utility>

#include "common/base/words.h"
#include "common/control/tick_leader.h"

namespace tilestream {

SwapSyncMaster::SwapSyncMaster(uint32_t tiles, bool partial_policy, uint32_t drop_after)
    : tiles_(tiles),
      partial_(partial_policy),
      drop_after_(drop_after),
      members_(tiles, false),
      left_out_(tiles, false),
      misses_(tiles, 0),
      ticks_without_(tiles, 0),
      recent_complete_(tiles) {}

// A node that (re)connects starts afresh: taking part, no misses.
void SwapSyncMaster::SetMember(uint32_t tile, bool member) {
  if (tile >= tiles_) return;
  misses_[tile] = 0;
  if (left_out_[tile]) {
    left_out_[tile] = false;
    --left_out_count_;
  }
  if (members_[tile] == member) return;
  members_[tile] = member;
  member_count_ += member ? 1 : -1;
}

void SwapSyncMaster::LeaveOut(uint32_t tile, bool out) {
  left_out_[tile] = out;
  left_out_count_ += out ? 1 : -1;
  if (out) ++stats_.left_out;
  changes_.push_back({tile, out});
}

void SwapSyncMaster::OpenTick(uint64_t tick, uint32_t timestamp, int64_t deadline_ns, int64_t at_ns,
                              bool led) {
  if (pending_.size() == kMaxPending) pending_.pop_front();  // cannot happen with deadlines passing
  Pending p{
      tick, timestamp,   deadline_ns, at_ns, std::vector<bool>(tiles_), std::vector<bool>(tiles_),
      led,  std::nullopt};
  for (uint32_t t = 0; t < tiles_; ++t) p.members[t] = TakesPart(t);
  pending_.push_back(std::move(p));
}

// A tick reported in time ends a tile's misses, and takes a tile left out
// back for the ticks opened from now on.
// A report that came both ways (datagram and TCP, common/control/
// sync_datagram.h) is taken once: a copy is neither a tick reported in
// time again nor one unmatched.
bool SwapSyncMaster::Reported(uint32_t tile, uint32_t timestamp) {
  RecentCompletes& r = recent_complete_[tile];
  for (size_t i = 0; i < r.count; ++i)
    if (r.timestamps[i] == timestamp) return true;
  r.timestamps[r.next] = timestamp;
  r.next = (r.next + 1) % r.timestamps.size();
  r.count = std::min(r.count + 1, r.timestamps.size());
  return false;
}

void SwapSyncMaster::Complete(uint32_t tile, uint32_t timestamp, int64_t now_ns) {
  if (tile < tiles_ && Reported(tile, timestamp)) return;
  for (const LedDeadline& d : led_released_)
    if (tile < tiles_ && left_out_[tile] && d.deadline_ns > 0 && d.timestamp == timestamp &&
        now_ns < d.deadline_ns + led_grace_ns_) {
      LeaveOut(tile, false);
      return;
    }
  if (tile < tiles_) {
    for (Pending& p : pending_) {
      if (p.timestamp != timestamp) continue;
      p.complete[tile] = true;
      if (left_out_[tile]) LeaveOut(tile, false);
      return;
    }
  }
  ++stats_.unmatched;
}

bool SwapSyncMaster::Adopt(const LeaderDecision& d) {
  for (Pending& p : pending_) {
    if (p.timestamp != d.event.timestamp || p.tick != d.event.tick || !p.led || p.adopted) continue;
    if (d.event.decision == SyncDecision::kPresent)
      unheard_in_a_row_ = 0;
    else if (AllComplete(p))
      ++unheard_in_a_row_;
    if (d.complete.size() == tiles_) p.complete = d.complete;
    p.adopted = d.event.decision;
    ++stats_.led;
    return true;
  }
  return false;
}

bool SwapSyncMaster::LedOverdue(int64_t now_ns) const {
  if (pending_.empty()) return false;
  const Pending& p = pending_.front();
  return p.led && !p.adopted && now_ns >= p.deadline_ns + led_grace_ns_;
}

uint64_t SwapSyncMaster::AbandonLed() {
  uint64_t n = 0;
  for (Pending& p : pending_) {
    if (!p.led || p.adopted) continue;
    p.adopted = SyncDecision::kSkip;
    ++n;
  }
  stats_.abandoned += n;
  return n;
}

bool SwapSyncMaster::AllComplete(const Pending& p) const {
  for (uint32_t t = 0; t < tiles_; ++t)
    if (p.members[t] && TakesPart(t) && !p.complete[t]) return false;
  return true;
}

bool SwapSyncMaster::AnyMember(const Pending& p) const {
  for (uint32_t t = 0; t < tiles_; ++t)
    if (p.members[t] && TakesPart(t)) return true;
  return false;
}

bool SwapSyncMaster::LaterTickHasMember() const {
  return std::any_of(pending_.begin() + 1, pending_.end(),
                     [this](const Pending& p) { return AnyMember(p); });
}

void SwapSyncMaster::CountMisses(const Pending& p) {
  for (uint32_t t = 0; t < tiles_; ++t) {
    if (!p.members[t] || !TakesPart(t)) continue;
    if (p.complete[t])
      misses_[t] = 0;
    else if (++misses_[t] == drop_after_)
      LeaveOut(t, true);
  }
}

void SwapSyncMaster::Release(SyncDecision d, const Pending& p, std::vector<SyncEvent>* out) {
  out->push_back({d, p.tick, p.timestamp, p.at_ns});
  for (uint32_t t = 0; t < tiles_; ++t) ticks_without_[t] += !TakesPart(t);
  ++(d == SyncDecision::kPresent ? stats_.presented
     : d == SyncDecision::kSkip  ? stats_.skipped
                                 : stats_.partial);
  if (d == SyncDecision::kSkip) return;
  if (released_.size() == kMaxReleased) {
    FinishSkew(released_.front());
    released_.pop_front();
  }
  released_.push_back({p.timestamp, std::vector<bool>(tiles_, false)});
}

void SwapSyncMaster::Decide(int64_t now_ns, std::vector<SyncEvent>* out) {
  while (!pending_.empty()) {
    const Pending& p = pending_.front();
    if (p.led) {  // its leader decides, whoever takes part now
      if (!p.adopted) return;
      Release(*p.adopted, p, out);
      CountMisses(p);
      led_released_[next_led_released_] = {p.timestamp, p.deadline_ns};
      next_led_released_ = (next_led_released_ + 1) % led_released_.size();
    } else if (!AnyMember(p)) {
      // Nobody to show it: dropped uncounted, at its deadline or once a
      // later tick has a tile again. Until then a tile left out that
      // reports it in time is taken back: dropped at once, a wall whose
      // every tile was left out (its one node stopped, the switch down
      // for three ticks) never came back.
      if (now_ns < p.deadline_ns && !LaterTickHasMember()) return;
    } else if (AllComplete(p)) {
      Release(SyncDecision::kPresent, p, out);
      CountMisses(p);
    } else if (now_ns >= p.deadline_ns) {
      Release(partial_ ? SyncDecision::kPartial : SyncDecision::kSkip, p, out);
      CountMisses(p);
    } else {
      return;
    }
    pending_.pop_front();
  }
}

int64_t SwapSyncMaster::next_deadline_ns() const {
  if (pending_.empty()) return INT64_MAX;
  const Pending& p = pending_.front();
  return p.deadline_ns + (p.led && !p.adopted ? led_grace_ns_ : 0);
}

void SwapSyncMaster::Shown(uint32_t tile, uint32_t timestamp, int64_t shown_ns) {
  for (auto it = released_.begin(); it != released_.end() && tile < tiles_; ++it) {
    if (it->timestamp != timestamp) continue;
    if (it->seen[tile]) return;  // said twice
    it->seen[tile] = true;
    if (it->shown == 0) it->first_ns = it->last_ns = shown_ns;
    it->first_ns = std::min(it->first_ns, shown_ns);
    it->last_ns = std::max(it->last_ns, shown_ns);
    if (++it->shown >= member_count_ - left_out_count_) {
      FinishSkew(*it);
      released_.erase(it);
    }
    return;
  }
  ++stats_.unmatched;
}

void SwapSyncMaster::FinishSkew(const Released& r) {
  if (r.shown < 2) return;
  const int64_t skew = r.last_ns - r.first_ns;
  ++stats_.skew_samples;
  stats_.skew_sum_ns += skew;
  stats_.skew_max_ns = std::max(stats_.skew_max_ns, skew);
  recent_max_skew_ = std::max(recent_max_skew_, skew);
  skews_.Add(skew);
}

int64_t SwapSyncMaster::TakeRecentMaxSkew() { return std::exchange(recent_max_skew_, 0); }

std::string FormatComplete(uint32_t tile, uint32_t timestamp) {
  return fmt::format("complete {} {}", tile, timestamp);
}

std::string FormatShown(uint32_t tile, uint32_t timestamp, int64_t shown_ns) {
  return fmt::format("shown {} {} {}", tile, timestamp, shown_ns);
}

std::string FormatStats(uint32_t tile, const TileRepairStats& s) {
  return fmt::format("stats {} {} {} {} {} {} {} {}", tile, s.frames, s.lost, s.incomplete,
                     s.rtt_us, s.rttvar_us, s.requested, s.late);
}

std::optional<SyncReport> ParseSyncReport(std::string_view line) {
  std::array<std::string_view, 9> w;
  size_t n = 0;
  if (!SplitWords(line, &w, &n) || n < 3) return std::nullopt;
  SyncReport r;
  if (w[0] == "stats" && (n == 5 || n == 9)) {  // 5: a receiver before round trips were measured
    r.kind = SyncReport::Kind::kStats;
    TileRepairStats& s = r.stats;
    if (!ParseInteger(w[1], &r.tile) || !ParseInteger(w[2], &s.frames) ||
        !ParseInteger(w[3], &s.lost) || !ParseInteger(w[4], &s.incomplete))
      return std::nullopt;
    if (n == 9 && (!ParseInteger(w[5], &s.rtt_us) || !ParseInteger(w[6], &s.rttvar_us) ||
                   !ParseInteger(w[7], &s.requested) || !ParseInteger(w[8], &s.late)))
      return std::nullopt;
    return r;
  }
  if (w[0] == "complete" && n == 3) {
    r.kind = SyncReport::Kind::kComplete;
  } else if (w[0] == "shown" && n == 4) {
    r.kind = SyncReport::Kind::kShown;
    if (!ParseInteger(w[3], &r.shown_ns)) return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (!ParseInteger(w[1], &r.tile) || !ParseInteger(w[2], &r.timestamp)) return std::nullopt;
  return r;
}

std::string FormatSyncEvent(const SyncEvent& e) {
  static constexpr const char* kWords[] = {"present", "skip", "partial"};
  if (e.at_ns > 0 && e.decision != SyncDecision::kSkip)
    return fmt::format("{} {} {} {}", kWords[static_cast<int>(e.decision)], e.timestamp, e.tick,
                       e.at_ns);
  return fmt::format("{} {} {}", kWords[static_cast<int>(e.decision)], e.timestamp, e.tick);
}

std::optional<SyncEvent> ParseSyncEvent(std::string_view line) {
  std::array<std::string_view, 4> w;
  size_t n = 0;
  if (!SplitWords(line, &w, &n) || n < 3) return std::nullopt;
  SyncEvent e;
  if (w[0] == "present")
    e.decision = SyncDecision::kPresent;
  else if (w[0] == "skip")
    e.decision = SyncDecision::kSkip;
  else if (w[0] == "partial")
    e.decision = SyncDecision::kPartial;
  else
    return std::nullopt;
  if (!ParseInteger(w[1], &e.timestamp) || !ParseInteger(w[2], &e.tick)) return std::nullopt;
  if (n == 4 &&
      (e.decision == SyncDecision::kSkip || !ParseInteger(w[3], &e.at_ns) || e.at_ns <= 0))
    return std::nullopt;
  return e;
}

std::string FormatStamp(std::string_view word, int64_t ns) {
  return fmt::format("{} {}", word, ns);
}
std::string FormatPing(int64_t ns) { return FormatStamp("ping", ns); }
std::string FormatPong(int64_t ns) { return FormatStamp("pong", ns); }

std::optional<int64_t> ParseStamp(std::string_view word, std::string_view line) {
  std::array<std::string_view, 2> w;
  size_t n = 0;
  int64_t ns = 0;
  if (!SplitWords(line, &w, &n) || n != 2 || w[0] != word || !ParseInteger(w[1], &ns) || ns < 0)
    return std::nullopt;
  return ns;
}

std::string FormatRtt(const RttEstimate& rtt) {
  return fmt::format("rtt {} {}", rtt.rtt_ns, rtt.rttvar_ns);
}

// At most 10 s each: a round trip beyond is no path a wall plays over.
std::optional<RttEstimate> ParseRtt(std::string_view line) {
  constexpr int64_t kMost = 10'000'000'000;
  std::array<std::string_view, 3> w;
  size_t n = 0;
  RttEstimate r;
  if (!SplitWords(line, &w, &n) || n != 3 || w[0] != "rtt" || !ParseInteger(w[1], &r.rtt_ns) ||
      !ParseInteger(w[2], &r.rttvar_ns) || r.rtt_ns < 0 || r.rttvar_ns < 0 || r.rtt_ns > kMost ||
      r.rttvar_ns > kMost)
    return std::nullopt;
  r.samples = 1;
  return r;
}

}  // namespace tilestream
