// The coordinator's reasons to send fewer ticks than the wall plays, the
// same on every tile (common/control/tick_shedder.h): the NICs left
// streaming while others are down (NIC failover), and tile ranks that skip
// ticks. Each changes the shedder and says so, once, when the share of
// ticks sent changes. The coordinator's thread; once a second.
#pragma once

#include <vector>

#include "common/control/tick_shedder.h"
#include "common/wall/wall_config.h"
#include "streamer/report.h"

namespace tilestream {

// nic_of_tile: the NIC each tile streams from now; capacity_bps: what each
// NIC carries (common/wall/nic_failover.h, NicCapacities).
void ShedForNics(const WallConfig& c, const std::vector<uint32_t>& nic_of_tile,
                 const std::vector<double>& capacity_bps, TickShedder* shedder);
// streams: the last second of each tile.
void ShedForOverload(const std::vector<StreamSummary>& streams, TickShedder* shedder);

}  // namespace tilestream
