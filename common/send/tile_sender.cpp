#include "common/send/tile_sender.h"

#include <algorithm>
#include <initializer_list>

namespace tilestream {

namespace {

constexpr size_t kMaxResends = 32;  // retransmissions per send
constexpr size_t kRtxPrefix = kRtpHeaderSize + kRtxPrefixSize;
constexpr int kMaxFeedbackPerAnswer = 64;  // datagrams read per AnswerFeedback
constexpr size_t kMaxNacksPerDatagram = 512;

// Datagrams as iovecs, grouped into runs of one size (GSO messages) for
// UdpSender::Send.
class RunBuilder {
 public:
  RunBuilder(std::vector<iovec>& iov, std::vector<DatagramRun>& runs) : iov_(iov), runs_(runs) {}
  // One datagram of `size` bytes: `parts` in order, empty ones left out.
  void Add(size_t size, std::initializer_list<iovec> parts) {
    if (n_runs_ == 0 || size != runs_[n_runs_ - 1].datagram_size)
      runs_[n_runs_++] = {{&iov_[n_iov_], 0}, size};
    const size_t before = n_iov_;
    for (const iovec& part : parts)
      if (part.iov_len > 0) iov_[n_iov_++] = part;
    DatagramRun& run = runs_[n_runs_ - 1];
    run.iov = {run.iov.data(), run.iov.size() + (n_iov_ - before)};
  }
  std::span<const DatagramRun> runs() const { return {runs_.data(), n_runs_}; }

 private:
  std::vector<iovec>& iov_;
  std::vector<DatagramRun>& runs_;
  size_t n_iov_ = 0, n_runs_ = 0;
};

iovec Part(const std::byte* data, size_t size) { return {const_cast<std::byte*>(data), size}; }

Pacer::Options PacerOptions(const TileSenderOptions& o, const Packetizer& p) {
  Pacer::Options po;
  po.enabled = o.pacing;
  po.quantum_ns = o.pacing_quantum_ns;
  po.max_burst_bytes = o.max_burst_bytes;
  po.phase = o.pacing_phase;
  po.burst_multiple = GsoSegmentsPerSend(p.packet_size(0));
  return po;
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
  sender->max_datagrams_ = so.max_datagrams;
  sender->max_iovecs_ = so.max_iovecs;
  sender->headers_.resize(sender->header_stride_ * most);
  sender->iov_.resize(3 * most);
  sender->runs_.resize(most);
  if (o.retransmission) {
    sender->resends_.reserve(kMaxResends);
    sender->rtx_headers_.resize(kMaxResends * (kRtxPrefix + sender->header_stride_));
    sender->rtx_iov_.resize(4 * kMaxResends);
    sender->rtx_runs_.resize(kMaxResends);
    sender->nacks_.resize(kMaxNacksPerDatagram);
    sender->feedback_.resize(2048);
  }
  return sender;
}

TileSender::TileSender(Packetizer p, UdpSender s, Clock* clock, const TileSenderOptions& o)
    : packetizer_(std::move(p)),
      socket_(std::move(s)),
      pacer_(clock, PacerOptions(o, packetizer_)),
      fraction_(o.pacing_fraction),
      share_(o.retransmission_share),
      rtx_payload_type_(o.rtx_payload_type),
      rtx_ssrc_(o.rtx_ssrc),
      history_(std::clamp<uint32_t>(o.history_frames, 3, 32)) {
  size_t max_header = 0;
  for (uint32_t i = 0; i < packetizer_.packet_count(); ++i)
    max_header = std::max(max_header, packetizer_.header_size(i));
  header_stride_ = (max_header + 63) / 64 * 64;
  // The cap's bucket holds two frames' share, so that what a frame with
  // little loss left over serves one with more, and at least 128 KiB (two
  // GSO sends) so that a small tile can have one lost send back: a burst
  // of loss is answered at once, a lasting loss at the share. A burst
  // beyond it may borrow as much again (counted, `borrowed`), repaid from
  // the share of the frames after it: what a stream sends again stays
  // within its share and four frames' share over any stretch.
  constexpr double kMinBucketBytes = 128 * 1024;
  const double frames_share = 2 * share_ * static_cast<double>(packetizer_.frame_payload_bytes());
  budget_max_ = share_ > 0 ? std::max(frames_share, kMinBucketBytes) : 0;
  budget_ = budget_max_;  // full: loss in the first frames is answered too
}

std::span<const DatagramRun> TileSender::BuildBurst(const std::byte* frame, uint32_t timestamp,
                                                    uint32_t first, uint32_t end) {
  RunBuilder burst(iov_, runs_);
  for (uint32_t i = first; i < end; ++i) {
    std::byte* h = headers_.data() + (i - first) * header_stride_;
    const size_t hn = packetizer_.WriteHeaders(
        i, timestamp, static_cast<uint32_t>(stats_.sequence + i), {h, header_stride_});
    const PixelRange px = packetizer_.pixels(i);
    const std::span<const std::byte> pad = packetizer_.padding(i);
    burst.Add(packetizer_.packet_size(i),
              {Part(h, hn), Part(frame + px.offset, px.length), Part(pad.data(), pad.size())});
  }
  return burst.runs();
}

void TileSender::BeginFrame(const std::byte* frame, uint32_t timestamp, int64_t start_ns,
                            int64_t interval_ns) {
  if (!ended_.ok()) return;
  pacer_.BeginFrame(start_ns, std::max<int64_t>(1, static_cast<int64_t>(interval_ns * fraction_)),
                    packetizer_.packet_count(), packetizer_.frame_payload_bytes());
  frame_ = frame;
  timestamp_ = timestamp;
  next_ = 0;
  late_ = false;
  std::rotate(history_.rbegin(), history_.rbegin() + 1, history_.rend());  // a few words each
  history_[0] = {frame, timestamp, static_cast<uint32_t>(stats_.sequence)};
}

IoStatus TileSender::SendBurst(bool hurry) {
  const uint32_t count = packetizer_.packet_count();
  late_ = late_ || hurry;
  const uint32_t end = pacer_.TakeBurst(next_, late_);
  const std::span<const DatagramRun> burst = BuildBurst(frame_, timestamp_, next_, end);
  const uint64_t before = socket_.stats().bytes;
  const IoStatus e = socket_.Send(burst);
  budget_ =
      std::min(budget_max_, budget_ + share_ * static_cast<double>(socket_.stats().bytes - before));
  next_ = end;
  if (e.ok() && next_ < count) return e;
  frame_ = nullptr;
  stats_.sequence += count;
  if (!e.ok()) {
    ended_ = e;
    return e;
  }
  ++stats_.frames;
  if (late_) ++stats_.late_frames;
  return {};
}

Status TileSender::MoveSocket(UdpSenderOptions options) {
  options.max_datagrams = max_datagrams_;
  options.max_iovecs = max_iovecs_;
  auto s = UdpSender::Open(options);
  if (!s.ok()) return s.status();
  s->CarryStatsFrom(socket_);
  socket_ = std::move(s).value();
  return {};
}

void TileSender::EndStream() {
  std::array<std::byte, kByeSize> bye;
  WriteBye(packetizer_.options().ssrc, bye);
  const iovec iov{bye.data(), bye.size()};
  for (int i = 0; i < 2; ++i) socket_.Send({&iov, 1}, bye.size());
}

void TileSender::AnswerFeedback() {
  for (int i = 0; i < kMaxFeedbackPerAnswer; ++i) {
    const ssize_t n = socket_.ReceiveFeedback(feedback_);
    if (n < 0) break;
    if (n > 0) AnswerNacks({feedback_.data(), static_cast<size_t>(n)});
  }
  FlushRetransmissions();
}

void TileSender::AnswerNacks(std::span<const std::byte> datagram) {
  size_t count = 0;
  if (!LooksLikeRtcp(datagram) || ParseGenericNacks(datagram, nacks_, &count) != RtcpError::kOk)
    ++stats_.feedback_malformed;
  bool ours = false;
  for (size_t i = 0; i < count; ++i) {
    if (nacks_[i].media_ssrc != packetizer_.options().ssrc) continue;
    ours = true;
    ForEachNacked(nacks_[i].entry, [this](uint16_t sequence) { Retransmit(sequence); });
  }
  stats_.nacks += ours;
}

// Queues packet `sequence` of the last frames for retransmission, if
// it was sent and the cap allows.
void TileSender::Retransmit(uint16_t sequence) {
  ++stats_.requested;
  const uint32_t count = packetizer_.packet_count();
  for (size_t h = 0; h < history_.size(); ++h) {
    const SentFrame& f = history_[h];
    const auto packet = static_cast<uint16_t>(sequence - f.first_sequence);
    const bool sent = f.pixels && packet < count && !(h == 0 && sending() && packet >= next_);
    if (!sent) continue;
    const double bytes = static_cast<double>(packetizer_.packet_size(packet) + kRtxPrefixSize);
    if (budget_ - bytes < -budget_max_) {
      ++stats_.refused_cap;
      return;
    }
    budget_ -= bytes;
    if (budget_ < 0) ++stats_.borrowed;
    resends_.push_back({&f, packet});
    if (resends_.size() == kMaxResends) FlushRetransmissions();
    return;
  }
  ++stats_.refused_old;
}

// Sends the queued retransmissions in one sendmmsg: each the RTX prefix,
// the original's headers after its RTP header, its pixels from the frame,
// its padding; runs of one size go as GSO messages.
void TileSender::FlushRetransmissions() {
  RunBuilder resent(rtx_iov_, rtx_runs_);
  const size_t stride = kRtxPrefix + header_stride_;
  for (size_t r = 0; r < resends_.size(); ++r) {
    const SentFrame& frame = *resends_[r].frame;
    const uint32_t k = resends_[r].packet;
    std::byte* prefix = rtx_headers_.data() + r * stride;
    std::byte* original = prefix + kRtxPrefix;
    const size_t hn = packetizer_.WriteHeaders(k, frame.timestamp, frame.first_sequence + k,
                                               {original, header_stride_});
    RtpHeader rtx;
    rtx.marker = (static_cast<uint8_t>(original[1]) & 0x80) != 0;
    rtx.payload_type = rtx_payload_type_;
    rtx.sequence = rtx_sequence_++;
    rtx.timestamp = frame.timestamp;
    rtx.ssrc = rtx_ssrc_;
    const std::span<const std::byte> pad = packetizer_.padding(k);
    WriteRtxPrefix(rtx, static_cast<uint16_t>(frame.first_sequence + k), !pad.empty(),
                   std::span<std::byte, kRtxPrefix>(prefix, kRtxPrefix));
    const size_t size = packetizer_.packet_size(k) + kRtxPrefixSize;
    const PixelRange px = packetizer_.pixels(k);
    resent.Add(size,
               {Part(prefix, kRtxPrefix), Part(original + kRtpHeaderSize, hn - kRtpHeaderSize),
                Part(frame.pixels + px.offset, px.length), Part(pad.data(), pad.size())});
    stats_.retransmitted_bytes += size;
  }
  stats_.retransmitted += resends_.size();
  if (!resent.runs().empty()) socket_.Send(resent.runs());
  resends_.clear();
}

IoStatus TileSender::SendFrame(const std::byte* frame, uint32_t timestamp, int64_t start_ns,
                               int64_t interval_ns, const std::function<bool()>& hurry) {
  BeginFrame(frame, timestamp, start_ns, interval_ns);
  if (!sending()) return ended_;
  for (;;) {
    const bool late = late_ || (hurry && hurry());
    if (!late) pacer_.WaitForSlot(next_);
    if (const IoStatus e = SendBurst(late); !e.ok() || !sending()) return e;
  }
}

}  // namespace tilestream
