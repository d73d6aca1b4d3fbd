// Which NIC each tile stream leaves through: pinned tiles keep theirs, the
// rest are balanced by bit rate relative to each NIC's speed. Pure function,
// thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace tilestream {

// pinned[i] is the NIC of tile i, or -1 to choose. Free tiles are taken in
// decreasing bit rate (stable by index) and each goes to the NIC whose load,
// (assigned bit rate + this tile's) / speed, is then lowest; ties go to the
// lower NIC index. `allowed(tile, nic)`, when given, limits a free tile to
// some NICs (those of its server). Returns a NIC index per tile.
// REQUIRES: pinned.size() == tile_bps.size(); nic_speed_bps non-empty, > 0;
//           every pinned index < nic_speed_bps.size(); every free tile
//           allowed on at least one NIC.
using NicAllowed = std::function<bool(size_t tile, size_t nic)>;
std::vector<uint32_t> AssignNics(std::span<const int> pinned, std::span<const double> tile_bps,
                                 std::span<const double> nic_speed_bps,
                                 const NicAllowed& allowed = {});

}  // namespace tilestream
