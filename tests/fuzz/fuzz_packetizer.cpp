// Any geometry and MTU the packetizer accepts: packetize -> parse -> copy
// gives back every pixel, packets fit the payload, and all but the last of a
// packed frame have the same size.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/wire/packetizer.h"

using namespace tilestream;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 7) return 0;
  PacketizerOptions o;
  o.tile.width = 1 + (data[0] | (data[1] << 8)) % 1200;
  o.tile.height = 1 + data[2] % 64;
  o.max_payload = 256 + (data[3] | (data[4] << 8)) % 9000;
  o.packing = data[5] & 1 ? Packing::kLine : Packing::kPacked;
  auto p = Packetizer::Create(o);
  if (!p.ok()) return 0;
  std::vector<std::byte> frame(o.tile.frame_bytes()), out(frame.size()),
      packet(p->max_packet_size());
  for (size_t i = 0; i < frame.size(); ++i) frame[i] = std::byte(data[6 + i % (size - 6)] + i);
  for (uint32_t i = 0; i < p->packet_count(); ++i) {
    const size_t n = p->Build(i, frame, 1, i, packet);
    if (n > o.max_payload) __builtin_trap();
    if (o.packing == Packing::kPacked && i + 1 < p->packet_count() && n != p->packet_size(0))
      __builtin_trap();
    Rfc4175View v;
    if (ParseRfc4175({packet.data(), n}, o.tile, &v) != ParseError::kOk) __builtin_trap();
    CopySegmentsToFrame(v, o.tile, out);
  }
  if (std::memcmp(out.data(), frame.data(), frame.size()) != 0) __builtin_trap();
  return 0;
}
