#include "common/control/tick_leader.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <utility>

#include "common/base/words.h"
#include "common/control/sync_datagram.h"

namespace tilestream {
namespace {

constexpr std::string_view kHex = "0123456789abcdef";

// A numeric address as inet_ntop writes it: at most 45 of 0-9 a-f A-F . :
bool ValidHost(std::string_view host) {
  if (host.empty() || host.size() > 45) return false;
  return std::all_of(host.begin(), host.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == '.' ||
           c == ':';
  });
}

bool ParsePeerAt(std::string_view host, std::string_view port, LanPeer* at) {
  if (!ValidHost(host) || !ParseInteger(port, &at->port) || at->port == 0) return false;
  at->host = std::string(host);
  return true;
}

}  // namespace

std::string FormatLeader(const LeaderLine& l) {
  if (!l.at) return "leader none";
  return fmt::format("leader {} {} {}", l.at->host, l.at->port, FormatSyncKey(l.key));
}

std::optional<LeaderLine> ParseLeader(std::string_view line) {
  std::array<std::string_view, 4> w;
  size_t n = 0;
  if (!SplitWords(line, &w, &n) || n < 2 || w[0] != "leader") return std::nullopt;
  LeaderLine l;
  if (n == 2 && w[1] == "none") return l;
  l.at.emplace();
  const auto key = n == 4 ? ParseSyncKey(w[3]) : std::nullopt;
  if (!key || !ParsePeerAt(w[1], w[2], &*l.at)) return std::nullopt;
  l.key = *key;
  return l;
}

std::string FormatLead(const LeadLine& l) {
  return fmt::format("lead {} {} {}", FormatSyncKey(l.key), l.tiles,
                     l.partial ? "partial" : "skip");
}

std::optional<LeadLine> ParseLead(std::string_view line) {
  std::array<std::string_view, 4> w;
  size_t n = 0;
  LeadLine l;
  if (!SplitWords(line, &w, &n) || n != 4 || w[0] != "lead" || !ParseInteger(w[2], &l.tiles) ||
      l.tiles == 0 || l.tiles > kMaxLedTiles || (w[3] != "skip" && w[3] != "partial"))
    return std::nullopt;
  const auto key = ParseSyncKey(w[1]);
  if (!key) return std::nullopt;
  l.key = *key;
  l.partial = w[3] == "partial";
  return l;
}

std::string FormatPeer(const PeerLine& p) {
  return fmt::format("peer {} {} {}", p.node, p.at.host, p.at.port);
}

std::optional<PeerLine> ParsePeer(std::string_view line) {
  std::array<std::string_view, 4> w;
  size_t n = 0;
  PeerLine p;
  if (!SplitWords(line, &w, &n) || n != 4 || w[0] != "peer" || !ParseInteger(w[1], &p.node) ||
      p.node >= kMaxLedTiles || !ParsePeerAt(w[2], w[3], &p.at))
    return std::nullopt;
  return p;
}

std::string FormatTiles(const std::vector<bool>& tiles) {
  std::string hex((tiles.size() + 3) / 4, '0');
  for (size_t i = 0; i < hex.size(); ++i) {
    unsigned digit = 0;
    for (unsigned b = 0; b < 4 && i * 4 + b < tiles.size(); ++b)
      if (tiles[i * 4 + b]) digit |= 1u << b;
    hex[i] = kHex[digit];
  }
  return hex;
}

bool ParseTiles(std::string_view hex, uint32_t tiles, std::vector<bool>* out) {
  if (tiles == 0 || tiles > kMaxLedTiles || hex.size() != (tiles + 3) / 4) return false;
  out->assign(tiles, false);
  for (size_t i = 0; i < hex.size(); ++i) {
    const size_t digit = kHex.find(hex[i]);
    if (digit == std::string_view::npos) return false;
    for (uint32_t b = 0; b < 4; ++b) {
      if ((digit & (1u << b)) == 0) continue;
      if (i * 4 + b >= tiles) return false;
      (*out)[i * 4 + b] = true;
    }
  }
  return true;
}

std::string FormatOpen(const OpenedTick& t) {
  return fmt::format("open {} {} {} {} {}", t.timestamp, t.tick, t.deadline_ns, t.at_ns,
                     FormatTiles(t.takers));
}

std::optional<OpenedTick> ParseOpen(std::string_view line, uint32_t tiles) {
  std::array<std::string_view, 6> w;
  size_t n = 0;
  OpenedTick t;
  if (!SplitWords(line, &w, &n) || n != 6 || w[0] != "open" || !ParseInteger(w[1], &t.timestamp) ||
      !ParseInteger(w[2], &t.tick) || !ParseInteger(w[3], &t.deadline_ns) ||
      !ParseInteger(w[4], &t.at_ns) || t.deadline_ns <= 0 || t.at_ns <= 0 ||
      !ParseTiles(w[5], tiles, &t.takers))
    return std::nullopt;
  return t;
}

std::string FormatGone(const std::vector<bool>& tiles) { return "gone " + FormatTiles(tiles); }

std::optional<std::vector<bool>> ParseGone(std::string_view line, uint32_t tiles) {
  std::array<std::string_view, 2> w;
  size_t n = 0;
  std::vector<bool> gone;
  if (!SplitWords(line, &w, &n) || n != 2 || w[0] != "gone" || !ParseTiles(w[1], tiles, &gone))
    return std::nullopt;
  return gone;
}

std::string FormatDecided(const LeaderDecision& d) {
  return fmt::format("decided {} {}", FormatSyncEvent(d.event), FormatTiles(d.complete));
}

std::optional<LeaderDecision> ParseDecided(std::string_view line, uint32_t tiles) {
  const auto [word, rest] = SplitFirstWord(line);
  const std::string_view trimmed = TrimBlanks(rest);
  const size_t last = trimmed.find_last_of(" \t");
  if (word != "decided" || last == std::string_view::npos) return std::nullopt;
  LeaderDecision d;
  const auto e = ParseSyncEvent(trimmed.substr(0, last));
  if (!e || !ParseTiles(trimmed.substr(last + 1), tiles, &d.complete)) return std::nullopt;
  d.event = *e;
  return d;
}

TickLeader::TickLeader(uint32_t tiles, bool partial_policy, uint32_t drop_after)
    : tiles_(tiles),
      partial_(partial_policy),
      drop_after_(drop_after),
      misses_(tiles, 0),
      left_out_(tiles, false),
      recent_(tiles) {}

void TickLeader::Open(const OpenedTick& t) {
  if (t.takers.size() != tiles_ || (opened_any_ && t.tick <= newest_)) return;
  opened_any_ = true;
  newest_ = t.tick;
  if (pending_.size() == kMaxPending) pending_.pop_front();  // deadlines pass long before
  Pending p{t, std::vector<bool>(tiles_, false)};
  for (uint32_t tile = 0; tile < tiles_; ++tile) p.complete[tile] = Reported(tile, t.timestamp);
  pending_.push_back(std::move(p));
}

bool TickLeader::Reported(uint32_t tile, uint32_t timestamp) const {
  const Recent& r = recent_[tile];
  return std::find(r.timestamps.begin(), r.timestamps.begin() + static_cast<ptrdiff_t>(r.count),
                   timestamp) != r.timestamps.begin() + static_cast<ptrdiff_t>(r.count);
}

void TickLeader::Complete(uint32_t tile, uint32_t timestamp, int64_t now_ns) {
  if (tile >= tiles_ || Reported(tile, timestamp)) return;
  for (const Decided& d : decided_)
    if (d.deadline_ns > 0 && d.timestamp == timestamp && now_ns < d.deadline_ns)
      left_out_[tile] = false;
  Recent& r = recent_[tile];
  r.timestamps[r.next] = timestamp;
  r.next = (r.next + 1) % r.timestamps.size();
  r.count = std::min(r.count + 1, r.timestamps.size());
  for (Pending& p : pending_) {
    if (p.t.timestamp != timestamp) continue;
    p.complete[tile] = true;
    left_out_[tile] = false;  // misses counted on as the master does
  }
}

void TickLeader::Gone(const std::vector<bool>& tiles) {
  if (tiles.size() != tiles_) return;
  for (Pending& p : pending_)
    for (uint32_t t = 0; t < tiles_; ++t)
      if (tiles[t]) p.t.takers[t] = false;
}

bool TickLeader::AllComplete(const Pending& p) const {
  for (uint32_t t = 0; t < tiles_; ++t)
    if (p.t.takers[t] && !left_out_[t] && !p.complete[t]) return false;
  return true;
}

void TickLeader::CountMisses(const Pending& p) {
  for (uint32_t t = 0; t < tiles_; ++t) {
    if (!p.t.takers[t] || left_out_[t]) continue;
    if (p.complete[t])
      misses_[t] = 0;
    else if (++misses_[t] == drop_after_)
      left_out_[t] = true;
  }
}

void TickLeader::Decide(int64_t now_ns, std::vector<LeaderDecision>* out) {
  while (!pending_.empty()) {
    const Pending& p = pending_.front();
    SyncDecision d = SyncDecision::kPresent;
    if (now_ns >= p.t.at_ns) {  // its moment passed here, and so on every node
      d = SyncDecision::kSkip;
      ++skipped_late_;
    } else if (!AllComplete(p)) {
      if (now_ns < p.t.deadline_ns) return;
      d = partial_ ? SyncDecision::kPartial : SyncDecision::kSkip;
    }
    out->push_back({{d, p.t.tick, p.t.timestamp, p.t.at_ns}, p.complete});
    CountMisses(p);
    decided_[next_decided_] = {p.t.timestamp, p.t.deadline_ns};
    next_decided_ = (next_decided_ + 1) % decided_.size();
    pending_.pop_front();
  }
}

int64_t TickLeader::next_deadline_ns() const {
  return pending_.empty() ? INT64_MAX : pending_.front().t.deadline_ns;
}

void TickLeader::Reset() {
  pending_.clear();
  opened_any_ = false;
  misses_.assign(tiles_, 0);
  left_out_.assign(tiles_, false);
  decided_.fill({});
}

}  // namespace tilestream
