#include "common/receive/packet_placement.h"

#include <algorithm>
#include <cstring>

#include "common/base/bytes.h"
#include "common/net/udp_socket.h"

namespace tilestream {
namespace {

constexpr uint32_t kNoPacket = ~uint32_t{0};
constexpr uint32_t kMissesBeforeBackoff = 8;
constexpr uint32_t kBackoffPeriod = 64;

}  // namespace

PacketPlacement::PacketPlacement(Packetizer plan, uint32_t batch, size_t message_bytes, bool gro)
    : plan_(std::move(plan)), message_bytes_(message_bytes) {
  packet_bytes_ = plan_.packet_size(0);
  // A GRO message is one of the sender's GSO sends: as many packets as it
  // groups (UdpSender), where the buffer holds them.
  per_message_ = gro ? static_cast<uint32_t>(std::clamp<size_t>(message_bytes_ / packet_bytes_, 1,
                                                                GsoSegmentsPerSend(packet_bytes_)))
                     : 1;
  for (uint32_t k = 0; k < plan_.packet_count(); ++k)
    header_bytes_ = std::max(header_bytes_, plan_.header_size(k));
  const size_t slots = size_t{batch} * per_message_;
  headers_.resize(slots * header_bytes_);
  pads_.resize(slots * kMaxPad);
  iov_.resize(size_t{batch} * (3 * per_message_ + 1));
  iov_count_.resize(batch);
  first_packet_.resize(batch);
  predicted_.resize(batch);
  buffers_.resize(batch);
  placed_count_.resize(batch);
  lengths_.resize(batch);
  segment_sizes_.resize(batch);
  views_.resize(slots);
}

void PacketPlacement::Prepare(std::byte* frame, size_t high_water,
                              std::span<std::byte* const> buffers) {
  uint32_t first = kNoPacket;
  const bool backing_off = misses_ >= kMissesBeforeBackoff && ++skipped_ % kBackoffPeriod != 0;
  if (frame && !backing_off) {
    // The packet whose pixels start at the high-water mark.
    const uint32_t k = plan_.PacketAt(high_water);
    if (k < plan_.packet_count()) first = k;
  }
  frame_ = first == kNoPacket ? nullptr : frame;
  for (uint32_t m = 0; m < buffers.size(); ++m) {
    buffers_[m] = buffers[m];
    iovec* iov = &iov_[size_t{m} * (3 * per_message_ + 1)];
    uint32_t n = 0, j = 0;
    first_packet_[m] = first == kNoPacket ? kNoPacket : first + m * per_message_;
    for (; frame_ && j < per_message_; ++j) {
      const uint32_t k = first_packet_[m] + j;
      if (k >= plan_.packet_count() || plan_.packet_size(k) != packet_bytes_) break;
      const PixelRange pixels = plan_.pixels(k);
      const size_t pad = plan_.padding(k).size();
      iov[n++] = {HeaderSlot(m, j), plan_.header_size(k)};
      iov[n++] = {frame_ + pixels.offset, pixels.length};
      if (pad) iov[n++] = {PadSlot(m, j), pad};
    }
    predicted_[m] = j;
    const size_t natural = j * packet_bytes_;
    iov[n++] = {buffers_[m] + natural, message_bytes_ - natural};
    iov_count_[m] = n;
  }
}

std::span<const iovec> PacketPlacement::message_iov(uint32_t m) const {
  return {&iov_[size_t{m} * (3 * per_message_ + 1)], iov_count_[m]};
}

bool PacketPlacement::InPlace(uint32_t m, uint32_t j, uint32_t k, Rfc4175View* v) const {
  const std::byte* h = headers_.data() + (size_t{m} * per_message_ + j) * header_bytes_;
  const std::span<const std::byte> pad = plan_.padding(k);
  const auto b0 = static_cast<uint8_t>(h[0]);  // V=2, P as planned, no extension, no CSRCs
  if (b0 != (0x80 | (pad.empty() ? 0 : 0x20))) return false;
  // The plan's payload type: a retransmission (RFC 4588) or a stranger's is
  // gathered and parsed as what it is.
  if ((static_cast<uint8_t>(h[1]) & 0x7f) != plan_.options().payload_type) return false;
  if (!pad.empty()) {
    const std::byte* p = pads_.data() + (size_t{m} * per_message_ + j) * kMaxPad;
    if (p[pad.size() - 1] != pad.back()) return false;
  }
  const std::span<const std::byte> lines = plan_.line_headers(k);
  if (std::memcmp(h + kPayloadHeaderSize, lines.data(), lines.size()) != 0) return false;
  ParseRtpHeader({h, kRtpHeaderSize}, &v->rtp);
  v->extended_sequence = LoadBE16(h + kRtpHeaderSize);
  v->line_headers = {h + kPayloadHeaderSize, lines.size()};
  const PixelRange pixels = plan_.pixels(k);
  v->pixels = {frame_ + pixels.offset, pixels.length};
  v->segment_count = plan_.segment_count(k);
  v->pixel_bytes = static_cast<uint32_t>(pixels.length);
  return true;
}

void PacketPlacement::Gather(uint32_t m, size_t from, size_t to) {
  size_t pos = 0;
  for (const iovec& iov : message_iov(m)) {
    const size_t begin = std::max(from, pos), end = std::min(to, pos + iov.iov_len);
    if (begin < end && static_cast<std::byte*>(iov.iov_base) != buffers_[m] + pos) {
      std::memcpy(buffers_[m] + begin, static_cast<std::byte*>(iov.iov_base) + (begin - pos),
                  end - begin);
      stats_.gathered += end - begin;
    }
    pos += iov.iov_len;
    if (pos >= to) break;
  }
}

void PacketPlacement::Resolve(uint32_t count, std::span<const size_t> lengths,
                              std::span<const uint16_t> segment_sizes) {
  bool failed = false, predicted = false;
  uint64_t placed = 0;
  resolved_ = count;
  for (uint32_t m = 0; m < count; ++m) {
    placed_count_[m] = 0;
    lengths_[m] = lengths[m];
    segment_sizes_[m] = segment_sizes[m];
    if (predicted_[m] == 0) continue;  // a plain receive into its buffer
    predicted = true;
    const size_t length = lengths[m];
    const size_t segment = segment_sizes[m] ? segment_sizes[m] : length;
    uint32_t j = 0;
    if (!failed && segment == packet_bytes_) {
      while (j < predicted_[m] && (j + 1) * segment <= length &&
             InPlace(m, j, first_packet_[m] + j, &views_[size_t{m} * per_message_ + j]))
        ++j;
    }
    placed_count_[m] = j;
    placed += j;
    const size_t rest = j * packet_bytes_;
    if (rest < length) {
      failed = true;
      Gather(m, rest, std::min(length, predicted_[m] * packet_bytes_));
    }
  }
  stats_.placed += placed;
  if (placed > 0)
    misses_ = 0;
  else if (predicted)
    ++misses_;
}

}  // namespace tilestream
