#include "common/tile_sender.h"

#include <algorithm>

namespace tilestream {

namespace {

Pacer::Options PacerOptions(const TileSenderOptions& o) {
  Pacer::Options p;
  p.enabled = o.pacing;
  p.quantum_ns = o.pacing_quantum_ns;
  p.max_burst_bytes = o.max_burst_bytes;
  p.phase = o.pacing_phase;
  return p;
}

}  // namespace

Result<std::unique_ptr<TileSender>> TileSender::Create(const TileSenderOptions& o, Clock* clock) {
  auto p = Packetizer::Create(o.packetizer);
  if (!p.ok()) return p.status();
  // The most packets a burst can hold: the byte bound's worth (the pacer
  // plans bursts from the frame's mean packet size; the smallest packet
  // bounds the count).
  size_t smallest = p->packet_size(0);
  for (uint32_t i = 0; i < p->packet_count(); ++i) smallest = std::min(smallest, p->packet_size(i));
  const uint64_t most = std::min<uint64_t>(p->packet_count(), o.max_burst_bytes / smallest + 1);
  UdpSenderOptions so = o.socket;
  so.max_datagrams = static_cast<uint32_t>(std::max<uint64_t>(so.max_datagrams, most));
  so.max_iovecs = static_cast<uint32_t>(std::max<uint64_t>(so.max_iovecs, 3 * most));
  auto s = UdpSender::Open(so);
  if (!s.ok()) return s.status();
  auto sender = std::unique_ptr<TileSender>(
      new TileSender(std::move(p).value(), std::move(s).value(), clock, o));
  sender->headers_.resize(sender->header_stride_ * most);
  sender->iov_.resize(3 * most);
  sender->runs_.resize(most);
  return sender;
}

TileSender::TileSender(Packetizer p, UdpSender s, Clock* clock, const TileSenderOptions& o)
    : packetizer_(std::move(p)),
      socket_(std::move(s)),
      pacer_(clock, PacerOptions(o)),
      fraction_(o.pacing_fraction) {
  size_t max_header = 0;
  for (uint32_t i = 0; i < packetizer_.packet_count(); ++i)
    max_header = std::max(max_header, packetizer_.header_size(i));
  header_stride_ = (max_header + 63) / 64 * 64;
}

size_t TileSender::BuildBurst(const std::byte* frame, uint32_t timestamp, uint32_t first,
                              uint32_t end) {
  size_t n_iov = 0, n_runs = 0;
  for (uint32_t i = first; i < end; ++i) {
    // A run: packets of one size, for GSO messages.
    const size_t size = packetizer_.packet_size(i);
    if (n_runs == 0 || size != runs_[n_runs - 1].datagram_size) {
      runs_[n_runs++] = {{&iov_[n_iov], 0}, size};
    }
    std::byte* h = headers_.data() + (i - first) * header_stride_;
    const size_t hn = packetizer_.WriteHeaders(
        i, timestamp, static_cast<uint32_t>(stats_.sequence + i), {h, header_stride_});
    const PixelRange px = packetizer_.pixels(i);
    const size_t before = n_iov;
    iov_[n_iov++] = {h, hn};
    iov_[n_iov++] = {const_cast<std::byte*>(frame) + px.offset, px.length};
    const std::span<const std::byte> pad = packetizer_.padding(i);
    if (!pad.empty()) iov_[n_iov++] = {const_cast<std::byte*>(pad.data()), pad.size()};
    DatagramRun& run = runs_[n_runs - 1];
    run.iov = {run.iov.data(), run.iov.size() + (n_iov - before)};
  }
  return n_runs;
}

void TileSender::BeginFrame(const std::byte* frame, uint32_t timestamp, int64_t start_ns,
                            int64_t interval_ns) {
  pacer_.BeginFrame(start_ns, std::max<int64_t>(1, static_cast<int64_t>(interval_ns * fraction_)),
                    packetizer_.packet_count(), packetizer_.frame_payload_bytes());
  frame_ = frame;
  timestamp_ = timestamp;
  next_ = 0;
  late_ = false;
}

int TileSender::SendBurst(bool hurry) {
  const uint32_t count = packetizer_.packet_count();
  late_ = late_ || hurry;
  const uint32_t end = pacer_.TakeBurst(next_, late_);
  const size_t n_runs = BuildBurst(frame_, timestamp_, next_, end);
  const int e = socket_.Send({runs_.data(), n_runs});
  next_ = end;
  if (e == 0 && next_ < count) return 0;
  frame_ = nullptr;
  stats_.sequence += count;
  if (e != 0) return e;
  ++stats_.frames;
  if (late_) ++stats_.late_frames;
  return 0;
}

int TileSender::SendFrame(const std::byte* frame, uint32_t timestamp, int64_t start_ns,
                          int64_t interval_ns, const std::function<bool()>& hurry) {
  BeginFrame(frame, timestamp, start_ns, interval_ns);
  for (;;) {
    const bool late = late_ || (hurry && hurry());
    if (!late) pacer_.WaitForSlot(next_);
    if (const int e = SendBurst(late); e != 0 || !sending()) return e;
  }
}

}  // namespace tilestream
