// Packetizer: cuts one tile frame into RTP/RFC 4175 packets (see
// docs/protocol.md).
//
// The packet layout is planned once, when the Packetizer is created, from the
// tile geometry and the maximum UDP payload; building a packet afterwards is a
// header write plus one memcpy, with no allocation. Every packet's pixels are
// one contiguous range of the frame, so a sender may also send headers and
// pixels as two iovecs without copying the pixels (WriteHeaders + pixels()).
//
// Packing::kPacked (default) fills every packet to the same size, splitting
// lines anywhere (continuation segments), so all packets of a frame but the
// last are equal and a frame can go to UDP GSO in large sends. It makes the
// fewest packets. Packing::kLine puts whole lines in a packet (one 2560-pixel
// line per 9000-MTU packet), or, where a line does not fit, splits each line
// into near-equal parts.
//
// A Packetizer is immutable after Create and may be shared between threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/base/result.h"
#include "common/wire/rfc4175.h"

namespace tilestream {

enum class Packing : uint8_t { kPacked = 0, kLine = 1 };

// The largest UDP payload for a link MTU: MTU - 40 (ST 2110-10: 1460 bytes
// at MTU 1500, 8960 at 9000), leaving room for IPv4/IPv6 headers.
// REQUIRES: mtu >= 576.
size_t MaxUdpPayloadForMtu(uint32_t mtu);

struct PacketizerOptions {
  TileGeometry tile;
  size_t max_payload = 8960;  // UDP payload bytes, see MaxUdpPayloadForMtu
  Packing packing = Packing::kPacked;
  uint8_t payload_type = kDefaultPayloadType;
  uint32_t ssrc = 0;
};

struct PixelRange {
  size_t offset = 0;  // into the frame
  size_t length = 0;
};

class Packetizer {
 public:
  // Fails if the tile is empty or larger than the 15-bit fields allow, if the
  // payload cannot hold one pixel, or the payload type is not 0..127.
  static Result<Packetizer> Create(const PacketizerOptions& options);

  const PacketizerOptions& options() const { return options_; }
  uint32_t packet_count() const { return static_cast<uint32_t>(packets_.size()); }
  // UDP payload size of packet i. REQUIRES: i < packet_count().
  size_t packet_size(uint32_t i) const {
    return packets_[i].header_bytes + packets_[i].pixels.length + packets_[i].padding;
  }
  size_t header_size(uint32_t i) const { return packets_[i].header_bytes; }
  PixelRange pixels(uint32_t i) const { return packets_[i].pixels; }
  // The packet whose pixels start at byte `offset` of the frame, or
  // packet_count() if none does. O(log n).
  uint32_t PacketAt(size_t offset) const;
  size_t max_packet_size() const { return max_packet_size_; }
  // UDP payload bytes of a whole frame: what a frame costs on the wire.
  size_t frame_payload_bytes() const { return frame_payload_bytes_; }
  uint32_t segment_count(uint32_t i) const { return packets_[i].segment_count; }
  // The encoded line headers of packet i (segment_count(i) * 6 bytes).
  std::span<const std::byte> line_headers(uint32_t i) const {
    return {line_headers_.data() + packets_[i].first_header_byte,
            size_t{packets_[i].segment_count} * kLineHeaderSize};
  }
  // RTP padding that follows the pixels of packet i (empty for most packets;
  // the P bit is set where it is not). Static storage.
  std::span<const std::byte> padding(uint32_t i) const;

  // Writes the RTP header, the extended sequence number and the line headers
  // of packet i: marker set on the last packet, sequence `sequence` (32 bits,
  // normally first_sequence_of_frame + i). Returns header_size(i).
  // REQUIRES: i < packet_count(), out.size() >= header_size(i).
  size_t WriteHeaders(uint32_t i, uint32_t timestamp, uint32_t sequence,
                      std::span<std::byte> out) const;

  // WriteHeaders, the packet's pixels copied from `frame`, then padding(i).
  // Returns packet_size(i).
  // REQUIRES: frame.size() >= tile.frame_bytes(), out.size() >= packet_size(i).
  size_t Build(uint32_t i, std::span<const std::byte> frame, uint32_t timestamp, uint32_t sequence,
               std::span<std::byte> out) const;

 private:
  struct PlannedPacket {
    uint32_t first_header_byte;  // into line_headers_
    uint32_t segment_count;
    uint32_t header_bytes;  // kPayloadHeaderSize + 6 * segment_count
    PixelRange pixels;
    uint8_t padding = 0;  // RTP padding bytes after the pixels, < 9
  };

  explicit Packetizer(const PacketizerOptions& options) : options_(options) {}
  void PlanPacked();
  void PlanLines();
  void AddPacket(std::span<const LineHeader> segments, size_t pixel_offset);

  PacketizerOptions options_;
  std::vector<PlannedPacket> packets_;
  std::vector<std::byte> line_headers_;  // pre-encoded, C bits set
  size_t max_packet_size_ = 0;
  size_t frame_payload_bytes_ = 0;
};

}  // namespace tilestream
