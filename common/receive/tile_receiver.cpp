#include "common/receive/tile_receiver.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>

#include "common/base/clock.h"
#include "common/receive/ask_for_lost.h"
#include "common/wall/wall_config.h"

namespace tilestream {
namespace {

constexpr int64_t kIdleTimeoutUs = 100'000;  // with nothing to ask for

}  // namespace

uint64_t FrameChecksum(const std::byte* pixels, size_t size) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ size;
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t w;
    std::memcpy(&w, pixels + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 29;
  }
  for (; i < size; ++i) h = (h ^ static_cast<uint8_t>(pixels[i])) * 0x100000001b3ull;
  return h ^ (h >> 32);
}

Result<std::unique_ptr<TileReceiver>> TileReceiver::Open(TileReceiverOptions o) {
  auto s = UdpReceiver::Open(o.socket);
  if (!s.ok()) return s.status();
  std::unique_ptr<TileReceiver> r(new TileReceiver(std::move(o), std::move(s).value()));
  if (r->options_.plan) {
    auto plan = Packetizer::Create(*r->options_.plan);
    if (!plan.ok()) return plan.status();
    r->placement_ = std::make_unique<PacketPlacement>(std::move(plan).value(), r->socket_.batch(),
                                                      UdpReceiver::kBufferSize, r->socket_.gro());
    r->assembler_.ExpectPlan(&r->placement_->plan());
    for (uint32_t m = 0; m < r->socket_.batch(); ++m)
      r->buffers_.push_back(r->socket_.message_buffer(m));
    r->lengths_.resize(r->socket_.batch());
    r->segments_.resize(r->socket_.batch());
  }
  return r;
}

TileReceiver::TileReceiver(TileReceiverOptions o, UdpReceiver s)
    : options_(std::move(o)), socket_(std::move(s)), assembler_(options_.assembler) {
  assembler_.ExpectSources(options_.expected_sources);
}

TileReceiver::~TileReceiver() { Stop(); }

void TileReceiver::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void TileReceiver::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

TileReceiverStats TileReceiver::Snapshot() const {
  std::lock_guard lock(mu_);
  return published_;
}

void TileReceiver::OnAdded(AddResult r) {
  if (r != AddResult::kOk) return;
  accepted_from_ = batch_from_;
  const ReadyFrame* frame = assembler_.just_finished();
  if (!frame || !frame->complete) return;
  if (options_.on_complete) options_.on_complete(options_.tile_index, frame->timestamp);
  if (options_.on_frame) {
    options_.on_frame(options_.tile_index, frame->timestamp,
                      FrameChecksum(frame->pixels, options_.assembler.tile.frame_bytes()));
  }
}

IoStatus TileReceiver::Receive() {
  const BatchResult batch = socket_.ReceiveBatch();
  if (batch.messages == 0) return batch.status;
  StampBatch();
  socket_.ForEachDatagram([this](std::span<const std::byte> d, const sockaddr_storage& from) {
    batch_from_ = &from;
    OnAdded(assembler_.Add(d, &from));
  });
  return {};
}

IoStatus TileReceiver::ReceivePlaced() {
  const FrameAssembler::Placement target = assembler_.PlacementTarget();
  placement_->Prepare(target.frame, target.high_water, buffers_);
  for (uint32_t m = 0; m < socket_.batch(); ++m)
    socket_.SetMessageIov(m, placement_->message_iov(m));
  const BatchResult batch = socket_.ReceiveBatch();
  const int n = batch.messages;
  if (n == 0) return batch.status;
  StampBatch();
  for (int m = 0; m < n; ++m) {
    lengths_[m] = socket_.message_length(m);
    segments_[m] = socket_.segment_size(m);
  }
  placement_->Resolve(n, lengths_, segments_);
  placement_->Admit(
      assembler_, [this](uint32_t m) { return batch_from_ = &socket_.message_source(m); },
      [this](AddResult r) { OnAdded(r); });
  return {};
}

void TileReceiver::PrepareWait(int64_t now) {
  const int64_t due = assembler_.loss()->next_due_ns();
  socket_.SetTimeoutUs(due == LossTracker::kNever
                           ? kIdleTimeoutUs
                           : std::clamp<int64_t>((due - now) / 1000, 100, kIdleTimeoutUs));
}

void TileReceiver::StampBatch() {
  if (LossTracker* loss = assembler_.loss()) loss->SetNow(MonotonicNs());
}

// NACKs for what is due, to where the stream comes from: the RFC 4585
// Generic NACK, reduced-size, on the stream's own port (RFC 5761).
// What waits in the socket has arrived: nothing is asked for while a full
// batch says more waits (a few batches at most), and what is due is judged
// at the moment the socket was read (the batch's stamp), not after the
// batch was taken in. Else a receiver slow to take in a batch (under ASan,
// on a loaded machine) asks for packets that wait in its socket, passed on
// the way by others.
void TileReceiver::AskForLost() {
  if (accepted_from_) sender_ = *accepted_from_;
  accepted_from_ = batch_from_ = nullptr;
  if (socket_.last_count() >= static_cast<int>(socket_.batch()) &&
      ++waited_batches_ <= kMaxWaitedBatches)
    return;
  waited_batches_ = 0;
  LossTracker* loss = assembler_.loss();
  if (socket_.last_count() == 0) loss->SetNow(MonotonicNs());  // read nothing: now
  if (const int64_t window = repair_window_ns_.load(std::memory_order_relaxed); window > 0)
    loss->SetWindow(window);
  loss->SetFirstCopies(first_nack_copies_.load(std::memory_order_relaxed));
  if (const SharedRtt* hint = options_.rtt_hint)
    loss->SetRttHint(hint->rtt_ns.load(std::memory_order_relaxed),
                     hint->rttvar_ns.load(std::memory_order_relaxed));
  tilestream::AskForLost(
      *loss, TileReceiverSsrc(options_.tile_index), sender_ ? assembler_.ssrc() : std::nullopt,
      [this](std::span<const std::byte> nack) { socket_.SendTo(nack, *sender_); });
}

// A tile far behind (docs/decisions.md, "A receiver far behind catches
// up"): what waits is late already, and copying it keeps the tile behind.
// Looked at only after a full batch, when more was waiting.
void TileReceiver::CatchUp() {
  if (socket_.last_count() < static_cast<int>(socket_.batch())) return;
  // At least this much waits (udp_socket.h: the count runs up to half the
  // granted buffer ahead).
  const size_t queued = socket_.QueuedBytes(), late = socket_.granted_receive_buffer() / 2;
  const size_t behind = queued > late ? queued - late : 0;
  const size_t frame = options_.assembler.tile.frame_bytes();
  if (behind > std::max(kBehindFrames * frame, kBehindFloorBytes))
    socket_.Discard(behind - frame / 4);
}

void TileReceiver::Loop() {
  auto next_publish = std::chrono::steady_clock::now();
  while (!stop_.load(std::memory_order_relaxed)) {
    if (assembler_.loss()) PrepareWait(MonotonicNs());
    error_ = placement_ ? ReceivePlaced() : Receive();
    if (!error_.ok()) break;  // said once, by whoever reads the stats
    CatchUp();
    if (assembler_.loss()) AskForLost();
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_publish) {
      Publish();
      next_publish = now + std::chrono::milliseconds(100);
    }
  }
  // What is still asked for when the tile stops never came back: counted
  // unrecoverable, so that what was lost is recovered or unrecoverable.
  if (LossTracker* loss = assembler_.loss()) loss->Forget();
  Publish();
}

void TileReceiver::Publish() {
  socket_.UpdateKernelDrops();
  std::lock_guard lock(mu_);
  published_ = {assembler_.stats(), socket_.stats(),
                placement_ ? placement_->stats() : PlacementStats{},
                assembler_.loss() ? assembler_.loss()->stats() : LossTrackerStats{}, error_};
  // An empty datagram never reaches the assembler: it is a packet too short.
  published_.assembler.malformed[static_cast<size_t>(ParseError::kTooShort)] +=
      socket_.stats().empty;
}

}  // namespace tilestream
