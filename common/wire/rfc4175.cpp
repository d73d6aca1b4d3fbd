#include "common/wire/rfc4175.h"

#include <cmath>
#include <cstring>

#include "common/base/bytes.h"

namespace tilestream {

const char* ParseErrorName(ParseError e) {
  switch (e) {
    case ParseError::kOk:
      return "ok";
    case ParseError::kTooShort:
      return "too_short";
    case ParseError::kBadVersion:
      return "bad_version";
    case ParseError::kBadPadding:
      return "bad_padding";
    case ParseError::kBadExtension:
      return "bad_extension";
    case ParseError::kTruncatedHeaders:
      return "truncated_headers";
    case ParseError::kZeroLength:
      return "zero_length";
    case ParseError::kLengthNotPgroup:
      return "length_not_pgroup";
    case ParseError::kInterlaced:
      return "interlaced";
    case ParseError::kLineBeyondHeight:
      return "line_beyond_height";
    case ParseError::kSegmentBeyondWidth:
      return "segment_beyond_width";
    case ParseError::kPayloadTruncated:
      return "payload_truncated";
    case ParseError::kCount:
      break;
  }
  return "unknown";
}

void StoreLineHeader(std::byte* p, const LineHeader& h) {
  StoreBE16(p, h.length);
  StoreBE16(p + 2, static_cast<uint16_t>((h.field ? 0x8000 : 0) | (h.line & 0x7fff)));
  StoreBE16(p + 4, static_cast<uint16_t>((h.continuation ? 0x8000 : 0) | (h.offset & 0x7fff)));
}

LineHeader LoadLineHeader(const std::byte* p) {
  LineHeader h;
  h.length = LoadBE16(p);
  const uint16_t line = LoadBE16(p + 2);
  const uint16_t offset = LoadBE16(p + 4);
  h.field = (line & 0x8000) != 0;
  h.line = line & 0x7fff;
  h.continuation = (offset & 0x8000) != 0;
  h.offset = offset & 0x7fff;
  return h;
}

ParseError ParseRtpHeader(std::span<const std::byte> in, RtpHeader* out) {
  if (in.size() < kRtpHeaderSize) return ParseError::kTooShort;
  const auto b0 = static_cast<uint8_t>(in[0]);
  const auto b1 = static_cast<uint8_t>(in[1]);
  if ((b0 >> 6) != 2) return ParseError::kBadVersion;
  out->marker = (b1 & 0x80) != 0;
  out->payload_type = b1 & 0x7f;
  out->sequence = LoadBE16(in.data() + 2);
  out->timestamp = LoadBE32(in.data() + 4);
  out->ssrc = LoadBE32(in.data() + 8);
  return ParseError::kOk;
}

namespace {

// The RFC 4175 payload after the RTP header; `rtx`: an RFC 4588
// retransmission, whose payload starts with the original sequence number.
ParseError ParsePayload(std::span<const std::byte> in, const TileGeometry& tile, bool rtx,
                        Rfc4175View* out) {
  if (ParseError e = ParseRtpHeader(in, &out->rtp); e != ParseError::kOk) return e;
  const auto b0 = static_cast<uint8_t>(in[0]);
  const bool padding = (b0 & 0x20) != 0;
  const bool extension = (b0 & 0x10) != 0;
  const size_t csrc_count = b0 & 0x0f;

  size_t pos = kRtpHeaderSize + 4 * csrc_count;
  size_t end = in.size();
  if (pos > end) return ParseError::kTooShort;
  if (extension) {
    if (end - pos < 4) return ParseError::kBadExtension;
    const size_t words = LoadBE16(in.data() + pos + 2);
    if (end - pos - 4 < 4 * words) return ParseError::kBadExtension;
    pos += 4 + 4 * words;
  }
  if (padding) {
    const auto pad = static_cast<uint8_t>(in[end - 1]);
    if (pad == 0 || pad > end - pos) return ParseError::kBadPadding;
    end -= pad;
  }
  if (rtx) {
    if (end - pos < kRtxPrefixSize) return ParseError::kTooShort;
    out->rtp.sequence = LoadBE16(in.data() + pos);
    pos += kRtxPrefixSize;
  }
  if (end - pos < kExtendedSequenceSize) return ParseError::kTooShort;
  out->extended_sequence = LoadBE16(in.data() + pos);
  pos += kExtendedSequenceSize;

  const size_t headers_begin = pos;
  const size_t group_bytes = tile.pgroup_bytes();
  const uint32_t group_pixels = tile.pgroup_pixels();
  uint32_t count = 0;
  size_t pixel_bytes = 0;
  for (;;) {
    if (end - pos < kLineHeaderSize) return ParseError::kTruncatedHeaders;
    const LineHeader h = LoadLineHeader(in.data() + pos);
    pos += kLineHeaderSize;
    ++count;
    if (h.length == 0) return ParseError::kZeroLength;
    if (h.length % group_bytes != 0 || h.offset % group_pixels != 0)
      return ParseError::kLengthNotPgroup;
    if (h.field) return ParseError::kInterlaced;
    if (h.line >= tile.height) return ParseError::kLineBeyondHeight;
    if (uint32_t{h.offset} + h.length / group_bytes * group_pixels > tile.width)
      return ParseError::kSegmentBeyondWidth;
    pixel_bytes += h.length;
    if (!h.continuation) break;
  }
  if (pixel_bytes > end - pos) return ParseError::kPayloadTruncated;

  out->line_headers = in.subspan(headers_begin, pos - headers_begin);
  out->pixels = in.subspan(pos, pixel_bytes);
  out->segment_count = count;
  out->pixel_bytes = static_cast<uint32_t>(pixel_bytes);
  return ParseError::kOk;
}

}  // namespace

ParseError ParseRfc4175(std::span<const std::byte> in, const TileGeometry& tile, Rfc4175View* out) {
  return ParsePayload(in, tile, /*rtx=*/false, out);
}

ParseError ParseRtx(std::span<const std::byte> in, const TileGeometry& tile, Rfc4175View* out,
                    uint16_t* rtx_sequence) {
  const ParseError e = ParsePayload(in, tile, /*rtx=*/true, out);
  if (e == ParseError::kOk) *rtx_sequence = LoadBE16(in.data() + 2);
  return e;
}

size_t WriteRtxPrefix(const RtpHeader& rtx, uint16_t original_sequence, bool padding,
                      std::span<std::byte, kRtpHeaderSize + kRtxPrefixSize> out) {
  out[0] = std::byte(padding ? 0xa0 : 0x80);
  out[1] = std::byte((rtx.marker ? 0x80 : 0) | (rtx.payload_type & 0x7f));
  StoreBE16(out.data() + 2, rtx.sequence);
  StoreBE32(out.data() + 4, rtx.timestamp);
  StoreBE32(out.data() + 8, rtx.ssrc);
  StoreBE16(out.data() + kRtpHeaderSize, original_sequence);
  return out.size();
}

size_t CopySegmentsToFrame(const Rfc4175View& packet, const TileGeometry& tile,
                           std::span<std::byte> frame) {
  const std::byte* header = packet.line_headers.data();
  const std::byte* src = packet.pixels.data();
  const size_t row_bytes = tile.row_bytes();
  for (uint32_t i = 0; i < packet.segment_count; ++i, header += kLineHeaderSize) {
    const LineHeader h = LoadLineHeader(header);
    std::memcpy(frame.data() + h.line * row_bytes + tile.PixelByte(h.offset), src, h.length);
    src += h.length;
  }
  return packet.pixel_bytes;
}

uint32_t RtpTimestampForTick(uint64_t tick, double fps, uint32_t base) {
  const long double ticks90k = static_cast<long double>(tick) * kRtpClockHz / fps;
  const auto t = static_cast<uint64_t>(std::llround(ticks90k));
  return base + static_cast<uint32_t>(t);
}

}  // namespace tilestream
