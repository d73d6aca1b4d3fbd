// Where each tile stream goes while some NICs are down (docs/streamer.md,
// "NIC failover"): a tile whose configured NIC is up stays on it; the
// tiles of a NIC that is down are balanced over the NICs of the same server
// that are up, counting what those already carry, by the rule the config's
// assignment follows (common/wall/nic_assignment.h); a tile whose server
// has no NIC up stays where the config put it. Pure function.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/wall/wall_config.h"

namespace tilestream {

// nic_up[n]: whether NIC n of the config is usable. Returns a NIC per tile.
// REQUIRES: nic_up.size() == c.nics.size().
std::vector<uint32_t> FailoverNics(const WallConfig& c, const std::vector<bool>& nic_up);

// What each NIC of the config carries, in bits per second (0: unknown, no
// limit): its speed_gbps where the config sets one, else what
// `kernel_bps(name)` says for a NIC of `server` (the one whose kernel is
// asked), else unknown. The "default" NIC of a config without [[nic]] is
// no interface: unknown unless set.
std::vector<double> NicCapacities(
    const WallConfig& c, uint32_t server,
    const std::function<std::optional<double>(const std::string&)>& kernel_bps);

// The share of the wall's rate the NICs can carry with tile t streaming
// from nic_of_tile[t]: 1 when each NIC's tiles fit its capacity (0:
// unknown, anything fits), else the lowest capacity / load over the NICs
// (every tile sends at the same rate, so the wall keeps that share of its
// ticks).
double CarriedShare(const WallConfig& c, const std::vector<uint32_t>& nic_of_tile,
                    const std::vector<double>& capacity_bps);

// The ceiling on the share of ticks sent while tiles stream from
// nic_of_tile: what the NICs carry now against what they carried on the
// config's routes, at most 1. A failover only ever cuts below what the
// wall sent before it: a wall whose NICs look too slow on paper with every
// NIC up (a speed set too low, a rate the hardware carries anyway) is not
// cut for it (docs/decisions.md, "A NIC's capacity").
double FailoverCeiling(const WallConfig& c, const std::vector<uint32_t>& nic_of_tile,
                       const std::vector<double>& capacity_bps);

}  // namespace tilestream
