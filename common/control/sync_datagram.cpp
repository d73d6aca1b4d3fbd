#include "common/control/sync_datagram.h"

#include <fmt/format.h>

#include <charconv>
#include <utility>

namespace tilestream {
namespace {

constexpr std::string_view kMagic = "tsync ";
constexpr size_t kKeyDigits = 16;

}  // namespace

std::string FormatSyncKey(uint64_t key) { return fmt::format("{:016x}", key); }

std::optional<uint64_t> ParseSyncKey(std::string_view hex) {
  if (hex.size() != kKeyDigits) return std::nullopt;
  uint64_t key = 0;
  const auto [end, error] = std::from_chars(hex.data(), hex.data() + hex.size(), key, 16);
  if (error != std::errc() || end != hex.data() + hex.size()) return std::nullopt;
  return key;
}

std::string FormatSyncDatagram(uint64_t key, std::string_view lines) {
  std::string d;
  d.reserve(kMagic.size() + kKeyDigits + 1 + lines.size());
  d += kMagic;
  d += FormatSyncKey(key);
  if (!lines.empty()) {
    d += '\n';
    d += lines;
  }
  return d;
}

std::optional<SyncDatagram> ParseSyncDatagram(std::string_view datagram) {
  if (datagram.size() > kMaxSyncDatagram || !datagram.starts_with(kMagic)) return std::nullopt;
  datagram.remove_prefix(kMagic.size());
  const size_t eol = datagram.find('\n');
  SyncDatagram d;
  const auto key = ParseSyncKey(datagram.substr(0, eol));
  if (!key) return std::nullopt;
  d.key = *key;
  if (eol == std::string_view::npos) return d;
  datagram.remove_prefix(eol + 1);
  while (!datagram.empty()) {
    const size_t end = datagram.find('\n');
    const std::string_view line = datagram.substr(0, end);
    if (d.count == kMaxSyncDatagramLines || line.empty()) return std::nullopt;
    d.lines[d.count++] = line;
    if (end == std::string_view::npos) break;
    datagram.remove_prefix(end + 1);
  }
  return d;
}

void DecisionCarrier::Add(std::string line) {
  if (lines_.size() == kCarried) lines_.pop_front();
  lines_.push_back(std::move(line));
}

std::string DecisionCarrier::Datagram(uint64_t key) const {
  const size_t room = kMaxSyncDatagram - FormatSyncDatagram(key, "").size();
  size_t first = lines_.size(), bytes = 0;
  while (first > 0 && bytes + lines_[first - 1].size() + 1 <= room)
    bytes += lines_[--first].size() + 1;
  std::string lines;
  for (size_t i = first; i < lines_.size(); ++i) {
    if (!lines.empty()) lines += '\n';
    lines += lines_[i];
  }
  return FormatSyncDatagram(key, lines);
}

}  // namespace tilestream
