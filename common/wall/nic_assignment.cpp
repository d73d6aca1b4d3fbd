#include "common/wall/nic_assignment.h"

#include <algorithm>
#include <cassert>
#include <numeric>

namespace tilestream {

std::vector<uint32_t> AssignNics(std::span<const int> pinned, std::span<const double> tile_bps,
                                 std::span<const double> nic_speed_bps, const NicAllowed& allowed) {
  assert(pinned.size() == tile_bps.size() && !nic_speed_bps.empty());
  std::vector<double> load(nic_speed_bps.size(), 0.0);
  std::vector<uint32_t> nic(pinned.size(), 0);
  std::vector<size_t> free_tiles;
  for (size_t t = 0; t < pinned.size(); ++t) {
    if (pinned[t] >= 0) {
      nic[t] = static_cast<uint32_t>(pinned[t]);
      load[nic[t]] += tile_bps[t];
    } else {
      free_tiles.push_back(t);
    }
  }
  std::stable_sort(free_tiles.begin(), free_tiles.end(),
                   [&](size_t a, size_t b) { return tile_bps[a] > tile_bps[b]; });
  for (size_t t : free_tiles) {
    size_t best = load.size();
    for (size_t n = 0; n < load.size(); ++n) {
      if (allowed && !allowed(t, n)) continue;
      if (best == load.size() || (load[n] + tile_bps[t]) / nic_speed_bps[n] <
                                     (load[best] + tile_bps[t]) / nic_speed_bps[best])
        best = n;
    }
    assert(best < load.size());
    nic[t] = static_cast<uint32_t>(best);
    load[best] += tile_bps[t];
  }
  return nic;
}

}  // namespace tilestream
