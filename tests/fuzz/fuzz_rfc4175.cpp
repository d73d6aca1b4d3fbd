// Any bytes as a UDP payload: parsing never reads outside the packet and an
// accepted packet never writes outside the frame (ASan checks both).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/wire/rfc4175.h"

using namespace tilestream;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const TileGeometry kTiles[] = {{1, 1}, {64, 16}, {641, 401}};
  static std::vector<std::byte> frame(kTiles[2].frame_bytes());
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  for (const TileGeometry& tile : kTiles) {
    Rfc4175View v;
    if (ParseRfc4175(in, tile, &v) != ParseError::kOk) continue;
    if (CopySegmentsToFrame(v, tile, {frame.data(), tile.frame_bytes()}) != v.pixel_bytes)
      __builtin_trap();
  }
  return 0;
}
