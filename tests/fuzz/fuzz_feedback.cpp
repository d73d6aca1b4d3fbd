// Any bytes as what comes back to a sender (RTCP Generic NACKs) and as an
// RFC 4588 retransmission: parsing never reads outside the datagram, an
// accepted retransmission never writes outside the frame (ASan checks
// both), and the sequence numbers of every NACK parsed come back the same
// when written again and parsed.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/wire/rfc4175.h"
#include "common/wire/rtcp_feedback.h"

using namespace tilestream;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const TileGeometry kTiles[] = {{1, 1}, {64, 16}, {641, 401}};
  static std::vector<std::byte> frame(kTiles[2].frame_bytes());
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  for (const TileGeometry& tile : kTiles) {
    Rfc4175View v;
    uint16_t rtx_sequence = 0;
    if (ParseRtx(in, tile, &v, &rtx_sequence) != ParseError::kOk) continue;
    if (CopySegmentsToFrame(v, tile, {frame.data(), tile.frame_bytes()}) != v.pixel_bytes)
      __builtin_trap();
  }
  std::array<NackRequest, 64> nacks;
  size_t count = 0;
  ParseGenericNacks(in, nacks, &count);
  if (count > nacks.size()) __builtin_trap();
  for (size_t i = 0; i < count; ++i) {
    std::vector<uint16_t> asked;
    ForEachNacked(nacks[i].entry, [&](uint16_t s) { asked.push_back(s); });
    std::array<std::byte, kNackHeaderSize + 17 * kNackEntrySize> again;
    size_t taken = 0;
    const size_t n = WriteGenericNack(1, nacks[i].media_ssrc, asked, again, &taken);
    std::array<NackRequest, 17> back;
    size_t back_count = 0;
    if (taken != asked.size() ||
        ParseGenericNacks({again.data(), n}, back, &back_count) != RtcpError::kOk)
      __builtin_trap();
    std::vector<uint16_t> round;
    for (size_t b = 0; b < back_count; ++b)
      ForEachNacked(back[b].entry, [&](uint16_t s) { round.push_back(s); });
    if (round != asked || back[0].media_ssrc != nacks[i].media_ssrc) __builtin_trap();
  }
  return 0;
}
