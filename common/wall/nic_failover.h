// Where each tile stream goes while some NICs are down (docs/streamer.md,
// "NIC failover"): a tile whose configured NIC is up stays on it; the
// tiles of a NIC that is down are balanced over the NICs of the same server
// that are up, counting what those already carry, by the rule the config's
// assignment follows (common/wall/nic_assignment.h); a tile whose server
// has no NIC up stays where the config put it. Pure function.
#pragma once

#include <cstdint>
#include <vector>

#include "common/wall/wall_config.h"

namespace tilestream {

// nic_up[n]: whether NIC n of the config is usable. Returns a NIC per tile.
// REQUIRES: nic_up.size() == c.nics.size().
std::vector<uint32_t> FailoverNics(const WallConfig& c, const std::vector<bool>& nic_up);

// The share of the wall's rate the NICs can carry with tile t streaming
// from nic_of_tile[t]: 1 when each NIC's tiles fit its speed, else the
// lowest speed / load over the NICs (every tile sends at the same rate, so
// the wall keeps that share of its ticks).
double CarriedShare(const WallConfig& c, const std::vector<uint32_t>& nic_of_tile);

}  // namespace tilestream
