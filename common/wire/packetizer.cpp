#include "common/wire/packetizer.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "common/base/bytes.h"

namespace tilestream {
namespace {

// Bounds that keep the plan's memory reasonable (a 16K x 8K tile at the
// smallest payload is about a million packets).
constexpr size_t kMaxFrameBytes = size_t{1} << 29;
constexpr size_t kMinPayload = 256;
constexpr size_t kMaxPayload = 65507;  // largest IPv4 UDP payload

}  // namespace

size_t MaxUdpPayloadForMtu(uint32_t mtu) { return mtu - 40; }

Result<Packetizer> Packetizer::Create(const PacketizerOptions& options) {
  const TileGeometry& t = options.tile;
  if (t.width == 0 || t.height == 0 || t.width > kMaxTileDimension ||
      t.height > kMaxTileDimension) {
    return Status::InvalidArgument("tile " + std::to_string(t.width) + "x" +
                                   std::to_string(t.height) + " is outside 1x1..32767x32767");
  }
  if (t.frame_bytes() > kMaxFrameBytes)
    return Status::InvalidArgument("tile frame of " + std::to_string(t.frame_bytes()) +
                                   " bytes is larger than 512 MiB");
  if (options.max_payload < kMinPayload || options.max_payload > kMaxPayload) {
    return Status::InvalidArgument("UDP payload of " + std::to_string(options.max_payload) +
                                   " bytes is outside 256..65507 (MTU too small or too large)");
  }
  if (options.payload_type > 127)
    return Status::InvalidArgument("RTP payload type " + std::to_string(options.payload_type) +
                                   " is outside 0..127");
  Packetizer p(options);
  if (options.packing == Packing::kPacked)
    p.PlanPacked();
  else
    p.PlanLines();
  for (uint32_t i = 0; i < p.packet_count(); ++i) {
    p.max_packet_size_ = std::max(p.max_packet_size_, p.packet_size(i));
    p.frame_payload_bytes_ += p.packet_size(i);
  }
  return p;
}

uint32_t Packetizer::PacketAt(size_t offset) const {
  const auto at =
      std::lower_bound(packets_.begin(), packets_.end(), offset,
                       [](const PlannedPacket& p, size_t o) { return p.pixels.offset < o; });
  return at != packets_.end() && at->pixels.offset == offset
             ? static_cast<uint32_t>(at - packets_.begin())
             : packet_count();
}

void Packetizer::AddPacket(std::span<const LineHeader> segments, size_t pixel_offset) {
  PlannedPacket packet;
  packet.first_header_byte = static_cast<uint32_t>(line_headers_.size());
  packet.segment_count = static_cast<uint32_t>(segments.size());
  packet.header_bytes =
      static_cast<uint32_t>(kPayloadHeaderSize + kLineHeaderSize * segments.size());
  packet.pixels.offset = pixel_offset;
  for (size_t s = 0; s < segments.size(); ++s) {
    LineHeader h = segments[s];
    h.continuation = s + 1 < segments.size();
    std::byte encoded[kLineHeaderSize];
    StoreLineHeader(encoded, h);
    line_headers_.insert(line_headers_.end(), encoded, encoded + kLineHeaderSize);
    packet.pixels.length += h.length;
  }
  packets_.push_back(packet);
}

// Fills each packet with as many pixels as fit, continuing lines across
// packets. The bytes used, 6 * segments + 3 * pixels, are a multiple of 3, so
// a packet ends within 2 bytes of the budget unless a line ends in its last
// few bytes with no room for another header; those packets are padded with
// RTP padding to the common size so that every packet but the last is equal.
void Packetizer::PlanPacked() {
  const TileGeometry& t = options_.tile;
  const size_t budget_per_packet = options_.max_payload - kPayloadHeaderSize;
  const size_t total_pixels = size_t{t.width} * t.height;
  std::vector<LineHeader> segments;
  size_t pos = 0;
  while (pos < total_pixels) {
    segments.clear();
    const size_t first_pixel = pos;
    size_t budget = budget_per_packet;
    while (pos < total_pixels && budget >= kLineHeaderSize + kPgroupBytes) {
      const size_t x = pos % t.width;
      const size_t n = std::min<size_t>(t.width - x, (budget - kLineHeaderSize) / kPgroupBytes);
      LineHeader h;
      h.line = static_cast<uint16_t>(pos / t.width);
      h.offset = static_cast<uint16_t>(x);
      h.length = static_cast<uint16_t>(n * kPgroupBytes);
      segments.push_back(h);
      pos += n;
      budget -= kLineHeaderSize + n * kPgroupBytes;
    }
    AddPacket(segments, first_pixel * kPgroupBytes);
  }
  // Everything but the last packet is padded to the size of the fullest one.
  const size_t full = kPayloadHeaderSize + budget_per_packet - budget_per_packet % kPgroupBytes;
  for (uint32_t i = 0; i + 1 < packet_count(); ++i)
    packets_[i].padding = static_cast<uint8_t>(full - packet_size(i));
}

// Whole lines per packet where a line fits; otherwise each line split into
// the fewest near-equal segments, one per packet.
void Packetizer::PlanLines() {
  const TileGeometry& t = options_.tile;
  const size_t row = t.row_bytes();
  const size_t room = options_.max_payload - kPayloadHeaderSize;
  std::vector<LineHeader> segments;
  if (kLineHeaderSize + row <= room) {
    const size_t lines_per_packet = room / (kLineHeaderSize + row);
    for (size_t line = 0; line < t.height; line += lines_per_packet) {
      segments.clear();
      for (size_t l = line; l < std::min<size_t>(t.height, line + lines_per_packet); ++l) {
        LineHeader h;
        h.line = static_cast<uint16_t>(l);
        h.length = static_cast<uint16_t>(row);
        segments.push_back(h);
      }
      AddPacket(segments, line * row);
    }
    return;
  }
  const size_t max_pixels = (room - kLineHeaderSize) / kPgroupBytes;
  const size_t parts = (t.width + max_pixels - 1) / max_pixels;
  const size_t per_part = (t.width + parts - 1) / parts;
  for (size_t line = 0; line < t.height; ++line) {
    for (size_t x = 0; x < t.width; x += per_part) {
      LineHeader h;
      h.line = static_cast<uint16_t>(line);
      h.offset = static_cast<uint16_t>(x);
      h.length = static_cast<uint16_t>(std::min<size_t>(per_part, t.width - x) * kPgroupBytes);
      AddPacket({&h, 1}, line * row + x * kPgroupBytes);
    }
  }
}

size_t Packetizer::WriteHeaders(uint32_t i, uint32_t timestamp, uint32_t sequence,
                                std::span<std::byte> out) const {
  const PlannedPacket& p = packets_[i];
  const bool last = i + 1 == packets_.size();
  std::byte* o = out.data();
  o[0] = std::byte{static_cast<uint8_t>(0x80 | (p.padding ? 0x20 : 0))};  // V=2, X=0, CC=0
  o[1] = std::byte{static_cast<uint8_t>((last ? 0x80 : 0) | options_.payload_type)};
  StoreBE16(o + 2, static_cast<uint16_t>(sequence));
  StoreBE32(o + 4, timestamp);
  StoreBE32(o + 8, options_.ssrc);
  StoreBE16(o + 12, static_cast<uint16_t>(sequence >> 16));
  std::memcpy(o + kPayloadHeaderSize, line_headers_.data() + p.first_header_byte,
              p.header_bytes - kPayloadHeaderSize);
  return p.header_bytes;
}

std::span<const std::byte> Packetizer::padding(uint32_t i) const {
  // kTrailers[n] holds n - 1 zero bytes followed by the count n.
  static const auto kTrailers = [] {
    std::array<std::array<std::byte, kLineHeaderSize + kPgroupBytes>,
               kLineHeaderSize + kPgroupBytes>
        t{};
    for (size_t n = 1; n < t.size(); ++n) t[n][n - 1] = std::byte(n);
    return t;
  }();
  const uint8_t n = packets_[i].padding;
  return {kTrailers[n].data(), n};
}

size_t Packetizer::Build(uint32_t i, std::span<const std::byte> frame, uint32_t timestamp,
                         uint32_t sequence, std::span<std::byte> out) const {
  const PlannedPacket& p = packets_[i];
  size_t n = WriteHeaders(i, timestamp, sequence, out);
  std::memcpy(out.data() + n, frame.data() + p.pixels.offset, p.pixels.length);
  n += p.pixels.length;
  const std::span<const std::byte> pad = padding(i);
  std::memcpy(out.data() + n, pad.data(), pad.size());
  return n + pad.size();
}

}  // namespace tilestream
