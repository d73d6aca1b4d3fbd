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
  for (const Nic& nic : c.nics) speeds.push_back(nic.balance_gbps() * 1e9);
  return AssignNics(pinned, bps, speeds, [&](size_t t, size_t n) {
    return nic_up[n] && c.nics[n].server == c.nics[c.routes[t].nic].server;
  });
}

std::vector<double> NicCapacities(
    const WallConfig& c, uint32_t server,
    const std::function<std::optional<double>(const std::string&)>& kernel_bps) {
  std::vector<double> bps(c.nics.size(), 0);
  for (size_t n = 0; n < c.nics.size(); ++n) {
    const Nic& nic = c.nics[n];
    if (nic.speed_gbps > 0)
      bps[n] = nic.speed_gbps * 1e9;
    else if (nic.server == server && nic.name != "default")
      bps[n] = kernel_bps(nic.name).value_or(0);
  }
  return bps;
}

double CarriedShare(const WallConfig& c, const std::vector<uint32_t>& nic_of_tile,
                    const std::vector<double>& capacity_bps) {
  std::vector<double> load(c.nics.size(), 0);
  for (uint32_t nic : nic_of_tile)
    if (nic < load.size()) load[nic] += c.wall.tile_bits_per_second();
  double share = 1.0;
  for (size_t n = 0; n < load.size(); ++n)
    if (load[n] > 0 && n < capacity_bps.size() && capacity_bps[n] > 0)
      share = std::min(share, capacity_bps[n] / load[n]);
  return share;
}

double FailoverCeiling(const WallConfig& c, const std::vector<uint32_t>& nic_of_tile,
                       const std::vector<double>& capacity_bps) {
  std::vector<uint32_t> configured(c.tile_count());
  for (uint32_t t = 0; t < c.tile_count(); ++t) configured[t] = c.routes[t].nic;
  const double before = CarriedShare(c, configured, capacity_bps);
  return std::min(1.0, CarriedShare(c, nic_of_tile, capacity_bps) / before);
}

}  // namespace tilestream
