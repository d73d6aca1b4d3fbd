#include "common/wall/nic_failover.h"

#include <algorithm>

#include "common/wall/nic_assignment.h"

namespace tilestream {

std::vector<uint32_t> FailoverNics(const WallConfig& c, const std::vector<bool>& nic_up) {
  const uint32_t tiles = c.tile_count();
  std::vector<bool> server_has_nic(c.servers.size() + 1, false);
  for (size_t n = 0; n < c.nics.size(); ++n)
    if (nic_up[n]) server_has_nic[c.nics[n].server] = true;
  std::vector<int> pinned(tiles);
  for (uint32_t t = 0; t < tiles; ++t) {
    const uint32_t nic = c.routes[t].nic;
    const bool stays = nic_up[nic] || !server_has_nic[c.nics[nic].server];
    pinned[t] = stays ? static_cast<int>(nic) : -1;
  }
  const std::vector<double> bps(tiles, c.wall.tile_bits_per_second());
  std::vector<double> speeds;
  for (const Nic& nic : c.nics) speeds.push_back(nic.speed_gbps * 1e9);
  return AssignNics(pinned, bps, speeds, [&](size_t t, size_t n) {
    return nic_up[n] && c.nics[n].server == c.nics[c.routes[t].nic].server;
  });
}

double CarriedShare(const WallConfig& c, const std::vector<uint32_t>& nic_of_tile) {
  std::vector<double> load(c.nics.size(), 0);
  for (uint32_t nic : nic_of_tile)
    if (nic < load.size()) load[nic] += c.wall.tile_bits_per_second();
  double share = 1.0;
  for (size_t n = 0; n < load.size(); ++n)
    if (load[n] > 0) share = std::min(share, c.nics[n].speed_gbps * 1e9 / load[n]);
  return share;
}

}  // namespace tilestream
