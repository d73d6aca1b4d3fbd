#include "common/tile_sender.h"

#include <algorithm>

namespace tilestream {

Result<std::unique_ptr<TileSender>> TileSender::Create(const TileSenderOptions& o, Clock* clock) {
  auto p = Packetizer::Create(o.packetizer);
  if (!p.ok()) return p.status();
  // A burst is one GSO send: as many packets as fit in 64 KB (7 at MTU 9000,
  // 44 at 1500) unless a smaller burst is asked for, and always unpaced.
  const uint32_t one_send =
      std::max<uint32_t>(1, std::min<uint32_t>(kMaxGsoSegments, kMaxUdpPayload / p->max_packet_size()));
  uint32_t burst = o.burst_packets == 0 || !o.pacing ? one_send : std::min(o.burst_packets, one_send);
  UdpSenderOptions so = o.socket;
  so.max_datagrams = std::max(so.max_datagrams, burst);
  so.max_iovecs = std::max(so.max_iovecs, 3 * burst);
  auto s = UdpSender::Open(so);
  if (!s.ok()) return s.status();
  return std::unique_ptr<TileSender>(new TileSender(std::move(p).value(), std::move(s).value(), clock, [&] {
    TileSenderOptions with_burst = o;
    with_burst.burst_packets = burst;
    return with_burst;
  }()));
}

TileSender::TileSender(Packetizer p, UdpSender s, Clock* clock, const TileSenderOptions& o)
    : packetizer_(std::move(p)),
      socket_(std::move(s)),
      pacer_(clock, Pacer::Options{o.pacing, 10'000, 1'000'000}),
      burst_(o.burst_packets),
      fraction_(o.pacing_fraction) {
  size_t max_header = 0;
  for (uint32_t i = 0; i < packetizer_.packet_count(); ++i)
    max_header = std::max(max_header, packetizer_.header_size(i));
  header_stride_ = (max_header + 63) / 64 * 64;
  headers_.resize(header_stride_ * burst_);
  iov_.resize(3 * size_t{burst_});
}

int TileSender::SendFrame(const std::byte* frame, uint32_t timestamp, int64_t start_ns, int64_t interval_ns,
                          const std::function<bool()>& hurry) {
  const uint32_t count = packetizer_.packet_count();
  pacer_.BeginFrame(start_ns, std::max<int64_t>(1, static_cast<int64_t>(interval_ns * fraction_)), count);
  bool late = false;
  uint32_t i = 0;
  while (i < count) {
    // A burst: up to burst_ packets of the first one's size (the frame's
    // last packet may be shorter), for one GSO send.
    const size_t size = packetizer_.packet_size(i);
    size_t n_iov = 0;
    uint32_t end = i;
    while (end < count && end - i < burst_ &&
           (packetizer_.packet_size(end) == size || (end + 1 == count && packetizer_.packet_size(end) < size))) {
      std::byte* h = headers_.data() + (end - i) * header_stride_;
      const size_t hn = packetizer_.WriteHeaders(end, timestamp, static_cast<uint32_t>(stats_.sequence + end),
                                                 {h, header_stride_});
      const PixelRange px = packetizer_.pixels(end);
      iov_[n_iov++] = {h, hn};
      iov_[n_iov++] = {const_cast<std::byte*>(frame) + px.offset, px.length};
      const std::span<const std::byte> pad = packetizer_.padding(end);
      if (!pad.empty()) iov_[n_iov++] = {const_cast<std::byte*>(pad.data()), pad.size()};
      ++end;
    }
    if (!late && hurry && hurry()) late = true;
    if (!late) pacer_.WaitForPacket(i);
    if (const int e = socket_.Send({iov_.data(), n_iov}, size); e != 0) {
      stats_.sequence += count;
      return e;
    }
    i = end;
  }
  stats_.sequence += count;
  ++stats_.frames;
  if (late) ++stats_.late_frames;
  return 0;
}

}  // namespace tilestream
