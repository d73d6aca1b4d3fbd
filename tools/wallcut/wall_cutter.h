// Cutting whole-wall frames into tiles, with bezel compensation: the source
// frame spans the whole wall including the pixels hidden behind the
// mullions, and those are dropped, so a line crossing two LCDs stays
// straight. Pure functions on caller memory, thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "common/wall/wall_config.h"

namespace tilestream {

// Copies tile `tile_index` out of a whole-wall RGB24 frame.
// REQUIRES: source.size() >= source_width() * source_height() * 3;
//           out.size() >= tile.frame_bytes().
void CutTile(const WallSettings& wall, std::span<const std::byte> source, uint32_t tile_index,
             std::span<std::byte> out);

}  // namespace tilestream
