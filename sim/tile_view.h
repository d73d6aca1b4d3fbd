// A packet of our streamer's, captured as its headers alone, seen as the
// receiver's direct placement sees it (common/receive/packet_placement.h):
// its pixels already at their place in the frame being assembled. The
// headers are parsed as ParseRfc4175 does; the pixels are not carried, so
// a run of the reference wall moves headers only (the pixel-checking
// scenarios carry them whole).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "common/wire/rfc4175.h"

namespace tilestream::sim {

// False when the headers do not parse, or do not add up to `size`, or the
// pixels are not one run of the frame (then the caller hands the packet
// over as a plain one).
bool PlacedView(std::span<const std::byte> head, size_t size, const TileGeometry& tile,
                const std::byte* frame, Rfc4175View* out);

}  // namespace tilestream::sim
