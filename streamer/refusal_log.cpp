#include "streamer/refusal_log.h"

#include <fmt/format.h>

#include <cstring>

namespace tilestream {
namespace {

std::string KindText(size_t slot) {
  const int e = RefusalCounts::SlotErrno(slot);
  return e == 0 ? "errors of other kinds"
                : fmt::format("{} ({})", RefusalCounts::SlotName(slot), std::strerror(e));
}

}  // namespace

void RefusalLog::Look(size_t tile, const std::string& tile_name, const RefusalCounts& refusals,
                      int64_t now_ns, std::vector<Line>* lines) {
  if (tile >= kinds_.size()) return;
  for (size_t k = 0; k < RefusalCounts::kSlots; ++k) {
    Kind& kind = kinds_[tile][k];
    const uint64_t count = refusals.at(k);
    if (!kind.active) {
      if (count <= kind.logged) continue;
      lines->push_back({true, fmt::format("tile {}: the kernel refuses sends with {}: {} datagrams "
                                          "so far; the receivers ask for them again like lost ones",
                                          tile_name, KindText(k), count - kind.logged)});
      kind = {true, now_ns, count};
      continue;
    }
    if (now_ns - kind.logged_ns < kPeriodNs) continue;
    if (count > kind.logged) {
      lines->push_back({true, fmt::format("tile {}: {} go on: {} datagrams refused in the last "
                                          "{:.0f} s, {} in all",
                                          tile_name, KindText(k), count - kind.logged,
                                          (now_ns - kind.logged_ns) / 1e9, count)});
    } else {
      lines->push_back(
          {false, fmt::format("tile {}: no {} for {:.0f} s ({} datagrams in all)", tile_name,
                              KindText(k), (now_ns - kind.logged_ns) / 1e9, count)});
      kind.active = false;
    }
    kind.logged_ns = now_ns;
    kind.logged = count;
  }
}

}  // namespace tilestream
