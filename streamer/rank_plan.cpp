#include "streamer/rank_plan.h"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace tilestream {

RankPlan::RankPlan(const WallConfig& c, uint32_t ranks) : tiles_(ranks), rank_(c.tile_count(), 0) {
  const uint32_t n = c.tile_count();
  const uint32_t tile_ranks = std::min(ranks, n);
  tile_ranks_ = static_cast<int>(tile_ranks);
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (tile_ranks < n || c.several_servers()) {
    auto key = [&c](uint32_t t) {
      const uint32_t nic = c.routes[t].nic;
      return std::tuple(c.routes[t].server, c.nics[nic].numa_node, nic, t);
    };
    std::sort(order.begin(), order.end(),
              [&key](uint32_t a, uint32_t b) { return key(a) < key(b); });
  }
  // Ranks take runs of `base` or `base + 1` tiles (`extra` of the latter),
  // each ending where its NIC's tiles end whenever either size allows it.
  const uint32_t base = n / tile_ranks;
  uint32_t extra = n % tile_ranks, pos = 0;
  for (uint32_t r = 0; r < tile_ranks; ++r) {
    uint32_t same_nic = 0;
    while (pos + same_nic < n && c.routes[order[pos + same_nic]].nic == c.routes[order[pos]].nic)
      ++same_nic;
    const bool can_big = extra > 0, can_small = extra < tile_ranks - r;
    uint32_t size = can_big ? base + 1 : base;
    if (can_small && same_nic == base) size = base;
    extra -= size > base;
    for (uint32_t i = pos; i < pos + size; ++i) {
      tiles_[r].push_back(order[i]);
      rank_[order[i]] = static_cast<int>(r + 1);
    }
    pos += size;
  }
}

}  // namespace tilestream
