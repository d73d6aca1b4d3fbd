// RTP (RFC 3550) with the RFC 4175 payload for uncompressed video: parsing
// and validation of one packet against a tile's geometry, and the copy of
// its pixels into a frame. The format is documented in docs/protocol.md.
//
// The wall streams RGB 8-bit: frames row-major RGB24 with no row padding,
// pixel (x, y) of a tile of width W at byte (y * W + x) * 3. Live sources
// (docs/live.md) may also send YCbCr 4:2:2 at 8 or 10 bits, whose pixel
// groups hold two pixels each: a frame is then its lines of pgroups, packed.
//
// Everything here works on caller-owned memory, never allocates and never
// logs, so it may be called per packet. All functions are thread-compatible
// (no shared state).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace tilestream {

inline constexpr size_t kRtpHeaderSize = 12;
inline constexpr size_t kExtendedSequenceSize = 2;
// RTP header + RFC 4175 extended sequence number.
inline constexpr size_t kPayloadHeaderSize = kRtpHeaderSize + kExtendedSequenceSize;
inline constexpr size_t kLineHeaderSize = 6;
// RGB 8-bit, the wall's own: one pgroup is one pixel of 3 bytes.
inline constexpr size_t kPgroupBytes = 3;
inline constexpr uint8_t kDefaultPayloadType = 96;
inline constexpr uint32_t kRtpClockHz = 90000;
// Line number and offset are 15-bit fields.
inline constexpr uint32_t kMaxTileDimension = 0x7fff;

// RFC 4175's samplings that a stream may carry: RGB 8-bit (one pixel of 3
// octets a pgroup), YCbCr 4:2:2 at 8 bits (two pixels in 4 octets) and at
// 10 bits (two pixels in 5 octets).
enum class Sampling : uint8_t { kRgb8 = 0, kYCbCr422_8 = 1, kYCbCr422_10 = 2 };

struct TileGeometry {
  uint32_t width = 0;  // a multiple of pgroup_pixels()
  uint32_t height = 0;
  Sampling sampling = Sampling::kRgb8;
  size_t pgroup_bytes() const {
    return sampling == Sampling::kRgb8 ? kPgroupBytes : sampling == Sampling::kYCbCr422_8 ? 4 : 5;
  }
  uint32_t pgroup_pixels() const { return sampling == Sampling::kRgb8 ? 1 : 2; }
  // Where pixel `pixel` of the frame (counted row by row; a pgroup's first)
  // starts, in bytes.
  size_t PixelByte(size_t pixel) const { return pixel / pgroup_pixels() * pgroup_bytes(); }
  size_t row_bytes() const { return PixelByte(width); }
  size_t frame_bytes() const { return row_bytes() * height; }
  bool operator==(const TileGeometry&) const = default;
};

struct RtpHeader {
  bool marker = false;
  uint8_t payload_type = 0;
  uint16_t sequence = 0;  // low 16 bits of the sequence
  uint32_t timestamp = 0;
  uint32_t ssrc = 0;
};

struct LineHeader {
  uint16_t length = 0;        // bytes of pixel data in this segment
  uint16_t line = 0;          // 15 bits
  uint16_t offset = 0;        // 15 bits, in pixels
  bool field = false;         // F: second field of interlaced video
  bool continuation = false;  // C: another line header follows
};

// Why a packet was rejected. Values are stable: they index counters that
// tools print by name.
enum class ParseError : uint8_t {
  kOk = 0,
  kTooShort = 1,             // shorter than the RTP header + extended sequence
  kBadVersion = 2,           // RTP version is not 2
  kBadPadding = 3,           // P bit set with a pad count of 0 or beyond the payload
  kBadExtension = 4,         // X bit set with an extension beyond the packet
  kTruncatedHeaders = 5,     // the line header chain runs past the payload
  kZeroLength = 6,           // a segment of length 0
  kLengthNotPgroup = 7,      // a length, or an offset, not of whole pgroups
  kInterlaced = 8,           // F bit set: only progressive video is supported
  kLineBeyondHeight = 9,     // line number >= tile height
  kSegmentBeyondWidth = 10,  // offset + pixels > tile width
  kPayloadTruncated = 11,    // fewer pixel bytes than the line headers announce
  kCount = 12,
};

const char* ParseErrorName(ParseError e);

// A validated packet: views into the caller's buffer, valid while it is.
struct Rfc4175View {
  RtpHeader rtp;
  uint16_t extended_sequence = 0;           // high 16 bits of the sequence
  std::span<const std::byte> line_headers;  // segment_count * 6 bytes
  std::span<const std::byte> pixels;        // pixel_bytes bytes
  uint32_t segment_count = 0;
  uint32_t pixel_bytes = 0;

  uint32_t sequence32() const { return (uint32_t{extended_sequence} << 16) | rtp.sequence; }
};

// Writes/reads one 6-byte line header. REQUIRES: 6 bytes at p.
void StoreLineHeader(std::byte* p, const LineHeader& h);
LineHeader LoadLineHeader(const std::byte* p);

// Parses the fixed RTP header only. Reads in[0, 12).
ParseError ParseRtpHeader(std::span<const std::byte> in, RtpHeader* out);

// Parses and validates a whole packet (UDP payload) against `tile`: CSRCs
// and header extension skipped, padding removed, every segment checked to lie
// inside the tile, the announced pixel bytes present (trailing bytes after
// them are ignored). Never reads outside `in`. On error *out is unspecified.
ParseError ParseRfc4175(std::span<const std::byte> in, const TileGeometry& tile, Rfc4175View* out);

// RFC 4588 retransmission (docs/protocol.md, "Retransmission"): an RTP
// packet of its own payload type, SSRC and sequence, with the original's
// timestamp and marker, whose payload is the original sequence number (2
// bytes) and then the original payload. ParseRtx validates it like
// ParseRfc4175 and returns the original packet's view: rtp.sequence is the
// original sequence number; payload type and SSRC stay the retransmission's.
inline constexpr size_t kRtxPrefixSize = 2;
ParseError ParseRtx(std::span<const std::byte> in, const TileGeometry& tile, Rfc4175View* out,
                    uint16_t* rtx_sequence);
// Writes a retransmission's RTP header (`rtx`: its payload type, SSRC,
// sequence; the original's timestamp and marker; P set if `padding`) and
// the original sequence number: 14 bytes. The original payload follows.
size_t WriteRtxPrefix(const RtpHeader& rtx, uint16_t original_sequence, bool padding,
                      std::span<std::byte, kRtpHeaderSize + kRtxPrefixSize> out);

// Copies every segment of `packet` to its place in `frame`. Returns the pixel
// bytes copied.
// REQUIRES: ParseRfc4175 returned kOk for `packet` with this `tile`;
//           frame.size() >= tile.frame_bytes().
size_t CopySegmentsToFrame(const Rfc4175View& packet, const TileGeometry& tile,
                           std::span<std::byte> frame);

// The 90 kHz RTP timestamp of wall tick `tick` at `fps` frames per second,
// offset by `base` (random per wall), modulo 2^32.
uint32_t RtpTimestampForTick(uint64_t tick, double fps, uint32_t base);

}  // namespace tilestream
