#include "sim/tile_view.h"

namespace tilestream::sim {

bool PlacedView(std::span<const std::byte> head, size_t size, const TileGeometry& tile,
                const std::byte* frame, Rfc4175View* out) {
  if (head.size() < kPayloadHeaderSize) return false;
  Rfc4175View v;
  if (ParseRtpHeader(head, &v.rtp) != ParseError::kOk) return false;
  const auto* b = reinterpret_cast<const uint8_t*>(head.data());
  if (b[0] & 0x10) return false;           // an extension: not our streamer's
  const bool padded = (b[0] & 0x20) != 0;  // the pad count is the last byte, not captured
  v.extended_sequence = static_cast<uint16_t>(b[12] << 8 | b[13]);
  size_t at = kPayloadHeaderSize, expect = 0, first = 0;
  for (bool more = true; more; at += kLineHeaderSize) {
    if (at + kLineHeaderSize > head.size()) return false;
    const LineHeader h = LoadLineHeader(head.data() + at);
    if (h.length == 0 || h.length % kPgroupBytes || h.field || h.line >= tile.height ||
        size_t{h.offset} + h.length / kPgroupBytes > tile.width)
      return false;
    const size_t offset = size_t{h.line} * tile.row_bytes() + size_t{h.offset} * kPgroupBytes;
    if (v.segment_count == 0) first = expect = offset;
    if (offset != expect) return false;  // not one run
    expect += h.length;
    v.pixel_bytes += h.length;
    ++v.segment_count;
    more = h.continuation;
  }
  const size_t end = at + v.pixel_bytes;
  if (padded ? !(size > end && size - end < 256) : size != end) return false;
  v.line_headers = head.subspan(kPayloadHeaderSize, size_t{v.segment_count} * kLineHeaderSize);
  v.pixels = {frame + first, v.pixel_bytes};
  *out = v;
  return true;
}

}  // namespace tilestream::sim
