// Test helper: crafts arbitrary RTP/RFC 4175 packets, conformant or not, to
// feed parsers the layouts other senders produce (several segments per packet,
// lines split anywhere) and the broken ones hostile input brings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/base/bytes.h"
#include "common/wire/rfc4175.h"

namespace tilestream::testing {

struct CraftedSegment {
  uint16_t line = 0;
  uint16_t offset = 0;
  uint16_t length = 0;
  bool field = false;
};

struct CraftedPacket {
  uint8_t version = 2;
  bool marker = false;
  uint8_t payload_type = 96;
  uint32_t sequence = 0;  // 32 bits: low half in RTP, high half extended
  uint32_t timestamp = 0;
  uint32_t ssrc = 0x1234;
  uint8_t csrc_count = 0;
  std::vector<std::byte> extension;  // whole words after the 4-byte ext header
  uint8_t padding = 0;
  std::vector<CraftedSegment> segments;
};

// Pixels of each segment are taken from `frame` (row-major pgroups of `tile`)
// where the segment lies inside it, else filled with 0xAB.
inline std::vector<std::byte> Craft(const CraftedPacket& p, const TileGeometry& tile,
                                    const std::vector<std::byte>& frame) {
  std::vector<std::byte> out(kRtpHeaderSize);
  out[0] = std::byte(uint8_t(p.version << 6) | (p.padding ? 0x20 : 0) |
                     (p.extension.empty() ? 0 : 0x10) | (p.csrc_count & 0x0f));
  out[1] = std::byte(uint8_t((p.marker ? 0x80 : 0) | (p.payload_type & 0x7f)));
  StoreBE16(&out[2], uint16_t(p.sequence));
  StoreBE32(&out[4], p.timestamp);
  StoreBE32(&out[8], p.ssrc);
  out.resize(out.size() + 4u * p.csrc_count, std::byte{0x11});
  if (!p.extension.empty()) {
    const size_t at = out.size();
    out.resize(at + 4);
    StoreBE16(&out[at], 0xBEDE);
    StoreBE16(&out[at + 2], uint16_t(p.extension.size() / 4));
    out.insert(out.end(), p.extension.begin(), p.extension.end());
  }
  const size_t ext_at = out.size();
  out.resize(ext_at + 2);
  StoreBE16(&out[ext_at], uint16_t(p.sequence >> 16));
  for (size_t i = 0; i < p.segments.size(); ++i) {
    const CraftedSegment& s = p.segments[i];
    LineHeader h{s.length, s.line, s.offset, s.field, i + 1 < p.segments.size()};
    const size_t at = out.size();
    out.resize(at + kLineHeaderSize);
    StoreLineHeader(&out[at], h);
  }
  for (const CraftedSegment& s : p.segments) {
    const size_t start = tile.PixelByte(size_t{s.line} * tile.width + s.offset);
    for (size_t b = 0; b < s.length; ++b)
      out.push_back(start + b < frame.size() ? frame[start + b] : std::byte{0xAB});
  }
  if (p.padding) {
    out.resize(out.size() + p.padding - 1, std::byte{0});
    out.push_back(std::byte{p.padding});
  }
  return out;
}

// The RFC 4588 retransmission of `original` (an RTP packet), built from its
// bytes as any RTX sender would: its own payload type, SSRC and sequence,
// the original's timestamp, marker and padding bit, the original sequence
// number, then the original payload.
inline std::vector<std::byte> MakeRtx(const std::vector<std::byte>& original, uint8_t rtx_pt,
                                      uint32_t rtx_ssrc, uint16_t rtx_sequence) {
  std::vector<std::byte> out(original.begin(), original.begin() + kRtpHeaderSize);
  out[1] = std::byte((static_cast<uint8_t>(original[1]) & 0x80) | (rtx_pt & 0x7f));
  StoreBE16(&out[2], rtx_sequence);
  StoreBE32(&out[8], rtx_ssrc);
  out.push_back(original[2]);  // the original sequence number
  out.push_back(original[3]);
  out.insert(out.end(), original.begin() + kRtpHeaderSize, original.end());
  return out;
}

// A deterministic test frame: every byte depends on its position and `seed`.
inline std::vector<std::byte> PatternFrame(const TileGeometry& tile, uint32_t seed) {
  std::vector<std::byte> f(tile.frame_bytes());
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : f) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b = std::byte(x);
  }
  return f;
}

}  // namespace tilestream::testing
