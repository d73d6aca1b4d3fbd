#include "common/receive/frame_assembler.h"

#include <algorithm>
#include <cstring>

#include "common/wire/rtcp_feedback.h"

namespace tilestream {
namespace {

constexpr uint64_t kSequenceBase = uint64_t{1} << 40;  // room to go back
constexpr size_t kMaxHeld = 65536;                     // a UDP payload's headers and pixels
constexpr uint32_t kRelockStreak = 1000;
// The most packets of a stream's first frame asked for before its first
// packet: a burst of loss, several GSO messages of 7.
constexpr uint32_t kMaxHead = 64;

// Signed distance between RTP timestamps, modulo 2^32.
int32_t TimestampDelta(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b); }

// Where a packet's pixels start in the frame (bytes).
size_t FirstPixelByte(const Rfc4175View& v, uint32_t width) {
  const LineHeader first = LoadLineHeader(v.line_headers.data());
  return (size_t{first.line} * width + first.offset) * kPgroupBytes;
}

}  // namespace

FrameAssembler::FrameAssembler(const AssemblerOptions& options)
    : options_(options),
      coverage_(size_t{options.tile.width} * options.tile.height),
      seen_(kWindow / 64, 0),
      ssrc_(options.ssrc) {
  held_bytes_.resize(kHeldSlots * kMaxHeld);
  options_.queue_depth = std::clamp<size_t>(options_.queue_depth, 1, 32);
  queue_.resize(options_.queue_depth);
  if (options_.show_partial) options_.rtx_payload_type.reset();
  if (options_.rtx_payload_type) loss_ = std::make_unique<LossTracker>(options_.loss);
  options_.repair_frames =
      loss_ ? std::clamp<size_t>(options_.repair_frames, 1, kMaxRepairFrames) : 0;
  repairs_.resize(options_.repair_frames);
  for (Repair& r : repairs_)
    r.coverage = CoverageMap(size_t{options.tile.width} * options.tile.height);
  const size_t buffers = options_.queue_depth + 2 + options_.repair_frames;
  buffers_.reserve(buffers);
  for (size_t b = 0; b < buffers; ++b) {
    buffers_.emplace_back(options_.tile.frame_bytes());
    if (options_.prefault) std::memset(buffers_.back().data(), 0, buffers_.back().size());
  }
}

FrameAssembler::SequenceVerdict FrameAssembler::JudgeSequence(uint16_t sequence,
                                                              uint32_t timestamp) const {
  if (!have_sequence_) {
    const int h = FollowsHeld(HeldAs::kProbation, sequence, timestamp);
    return {h >= 0 ? Order::kNewStream : Order::kProbation, 0, h};
  }
  const uint64_t ext = Extend(sequence);
  if (ext > max_sequence_ ? ext - max_sequence_ >= kMaxDropout : max_sequence_ - ext >= kWindow) {
    const int h = FollowsHeld(HeldAs::kJump, sequence, timestamp);
    return {h >= 0 ? Order::kNewStream : Order::kJump, 0, h};
  }
  if (ext > max_sequence_) return {Order::kAhead, ext};
  auto& word = seen_[(ext % kWindow) / 64];
  if (word & (uint64_t{1} << (ext % 64))) return {Order::kDuplicate, ext};
  return {Order::kBehind, ext};
}

uint64_t FrameAssembler::Extend(uint16_t sequence) const {
  uint64_t ext = (max_sequence_ & ~uint64_t{0xffff}) | sequence;
  if (ext + 0x8000 < max_sequence_)
    ext += 0x10000;
  else if (ext > max_sequence_ + 0x8000)
    ext -= 0x10000;
  return ext;
}

void FrameAssembler::CommitSequence(const SequenceVerdict& v) {
  auto bit = [this](uint64_t s) -> uint64_t& { return seen_[(s % kWindow) / 64]; };
  auto mask = [](uint64_t s) { return uint64_t{1} << (s % 64); };
  const uint64_t ext = v.extended;
  if (v.order == Order::kBehind) {
    bit(ext) |= mask(ext);
    ++stats_.reordered;
    if (stats_.lost > 0) --stats_.lost;  // it was counted lost when the gap appeared
    if (loss_) loss_->Arrived(ext);
    return;
  }
  MarkLostBefore(ext);
  max_sequence_ = ext;
  bit(ext) |= mask(ext);
}

void FrameAssembler::MarkLostBefore(uint64_t ext) {
  const uint64_t gap = ext - max_sequence_ - 1;
  stats_.lost += gap;
  if (loss_ && gap > 0) loss_->Lost(max_sequence_ + 1, gap);
  if (gap + 1 >= kWindow) {
    std::fill(seen_.begin(), seen_.end(), 0);
    return;
  }
  for (uint64_t s = max_sequence_ + 1; s < ext; ++s)
    seen_[(s % kWindow) / 64] &= ~(uint64_t{1} << (s % 64));
}

void FrameAssembler::MarkTailLost() {
  if (!plan_ || !loss_ || !have_frame_ || !tail_open_) return;
  tail_open_ = false;
  const uint32_t count = plan_->packet_count();
  const uint32_t newest = plan_->PacketAt(newest_offset_);
  // Not the plan's, its last, or more than a sender ends a frame without
  // (a tail so long is a stream cut short, and would outrun the window).
  if (newest + 1 >= count || count - newest > kWindow / 2) return;
  const uint64_t end = max_sequence_ + (count - newest);  // the next frame's first
  MarkLostBefore(end);
  max_sequence_ = end - 1;
}

AddResult FrameAssembler::AddRtcp(std::span<const std::byte> packet) {
  if (ssrc_ && SaysBye(packet, *ssrc_)) {
    ++stats_.byes;
    MarkTailLost();
  }
  return AddResult::kRtcp;
}

FrameAssembler::Stamp FrameAssembler::JudgeTimestamp(uint32_t ts, Order order) const {
  const bool ahead = order == Order::kAhead;
  if (have_frame_ && ts == timestamp_) return Stamp::kSameFrame;
  if (!have_frame_ && !have_finished_) return ahead ? Stamp::kNewFrame : Stamp::kRefused;
  const int32_t advance = TimestampDelta(ts, have_frame_ ? timestamp_ : finished_timestamp_);
  if (advance <= 0) return ahead ? Stamp::kRefused : Stamp::kLate;
  return ahead && advance <= kMaxTimestampAdvance ? Stamp::kNewFrame : Stamp::kRefused;
}

// The very next packet after a held one admits it, as A.1 asks. On
// probation and after a jump only if it is of the same frame, so a
// stranger's packet never pairs with a real one, nor a real one with a
// stranger's that happens to hold the sequence number before it. A new
// frame's next packet may also be of a later frame (frames of one packet).
int FrameAssembler::FollowsHeld(HeldAs as, uint16_t sequence, uint32_t timestamp) const {
  for (int h = 0; h < static_cast<int>(kHeldSlots); ++h) {
    const Held& held = held_[h];
    if (!held.valid || held.as != as ||
        sequence != static_cast<uint16_t>(held.view.rtp.sequence + 1))
      continue;
    const int32_t advance = TimestampDelta(timestamp, held.view.rtp.timestamp);
    if (advance == 0 || (as == HeldAs::kNewFrame && advance > 0 && advance <= kMaxTimestampAdvance))
      return h;
  }
  return -1;
}

uint64_t& FrameAssembler::HeldCount(HeldAs as) {
  switch (as) {
    case HeldAs::kProbation:
      return stats_.probation;
    case HeldAs::kJump:
      return stats_.sequence_jump;
    case HeldAs::kNewFrame:
      break;
  }
  return stats_.timestamp_out_of_sequence;
}

AddResult FrameAssembler::Hold(const Rfc4175View& v, HeldAs as) {
  ++HeldCount(as);
  const size_t slot = next_held_++ % kHeldSlots;
  Held& h = held_[slot];
  new_frame_held_ = new_frame_held_ || as == HeldAs::kNewFrame;
  const size_t headers = v.line_headers.size();
  h.valid = headers + v.pixel_bytes <= kMaxHeld;
  if (h.valid) {
    h.as = as;
    std::byte* bytes = held_bytes_.data() + slot * kMaxHeld;
    std::memcpy(bytes, v.line_headers.data(), headers);
    std::memcpy(bytes + headers, v.pixels.data(), v.pixel_bytes);
    h.view = v;
    h.view.line_headers = {bytes, headers};
    h.view.pixels = {bytes + headers, v.pixel_bytes};
  }
  switch (as) {
    case HeldAs::kProbation:
      return AddResult::kProbation;
    case HeldAs::kJump:
      return AddResult::kSequenceJump;
    case HeldAs::kNewFrame:
      break;
  }
  return AddResult::kTimestampOutOfSequence;
}

// Held packet `held` and `v`, which follows it, start a stream (a new one,
// or the sender restarted): the held one goes first, then `v`, then the
// other held packets that belong to the stream (it started reordered).
// A frame half assembled from the old stream ends, incomplete.
AddResult FrameAssembler::AdmitNewStream(int held, const Rfc4175View& v,
                                         const std::byte* placed_in) {
  const HeldSlots candidates = held_;
  for (Held& h : held_) h.valid = false;
  const Held& first = candidates[held];
  have_sequence_ = true;
  max_sequence_ = kSequenceBase + static_cast<uint16_t>(first.view.rtp.sequence - 1);
  // Picked up just after the start of a frame (its first packets lost):
  // with the sender's plan, the packets before are as missing as any gap.
  // Up to kMaxHead: further in, it is a node that joined mid-stream, which
  // lost nothing and would ask for the frame its first packet falls in.
  if (plan_ && loss_) {
    const uint32_t k = plan_->PacketAt(FirstPixelByte(first.view, options_.tile.width));
    if (k < plan_->packet_count() && k <= kMaxHead) max_sequence_ -= k;
  }
  std::fill(seen_.begin(), seen_.end(), 0);
  if (loss_) loss_->Forget();
  if (have_frame_) Finish(/*by_marker=*/false);
  have_finished_ = false;
  --HeldCount(first.as);
  Admit(first.view, nullptr);
  const AddResult result = Admit(v, placed_in);
  AdmitOtherHeld(candidates, held);
  return result;
}

// A new timestamp after a gap in sequence (loss, or a stranger's packet
// that happens to land ahead) may end the frame only once the packet after
// it follows it: held until then, so one stranger's packet never ends a
// frame. Then it goes first, `v` after it.
AddResult FrameAssembler::AdmitNewFrame(const Rfc4175View& v, const SequenceVerdict& order,
                                        const std::byte* placed_in) {
  const int held = FollowsHeld(HeldAs::kNewFrame, v.rtp.sequence, v.rtp.timestamp);
  if (held < 0 || JudgeTimestamp(held_[held].view.rtp.timestamp, Order::kAhead) != Stamp::kNewFrame)
    return Hold(v, HeldAs::kNewFrame);
  HeldSlots candidates = held_;
  for (size_t h = 0; h < kHeldSlots; ++h) {
    if (held_[h].as == HeldAs::kNewFrame)
      held_[h].valid = false;
    else
      candidates[h].valid = false;
  }
  --stats_.timestamp_out_of_sequence;
  CommitSequence({Order::kAhead, order.extended - 1});
  Write(candidates[held].view, nullptr);
  const AddResult result = Admit(v, placed_in);  // now the next in sequence
  AdmitOtherHeld(candidates, held);
  return result;
}

// Held packets that now belong to the stream, other than the one that
// `except` admitted; those that do not are refused by the usual rules.
void FrameAssembler::AdmitOtherHeld(const HeldSlots& candidates, int except) {
  for (int h = 0; h < static_cast<int>(kHeldSlots); ++h) {
    const Held& other = candidates[h];
    if (h == except || !other.valid) continue;
    // Only what can be written or refused now: a packet held again would
    // overwrite the bytes of the ones still to come.
    const SequenceVerdict order = JudgeSequence(other.view.rtp.sequence, other.view.rtp.timestamp);
    const bool held_again =
        order.order == Order::kAhead && order.extended != max_sequence_ + 1 &&
        JudgeTimestamp(other.view.rtp.timestamp, Order::kAhead) == Stamp::kNewFrame;
    if (held_again || (order.order != Order::kAhead && order.order != Order::kBehind &&
                       order.order != Order::kDuplicate))
      continue;
    --HeldCount(other.as);  // counted again by Admit if refused
    Admit(other.view, nullptr);
  }
}

void FrameAssembler::StartFrame(uint32_t timestamp) {
  have_frame_ = true;
  timestamp_ = timestamp;
  extent_ = {};
  coverage_.Clear(high_water_ / kPgroupBytes);
  high_water_ = 0;
  // Partial frames show the previous picture where packets are missing.
  std::lock_guard lock(handoff_mu_);
  const int previous = queued_ ? queue_[queued_ - 1].buffer : consumer_;
  if (options_.show_partial && previous >= 0)
    std::memcpy(buffers_[assembling_].data(), buffers_[previous].data(),
                buffers_[assembling_].size());
}

void FrameAssembler::Finish(bool by_marker) {
  const bool complete = coverage_.full();
  // Its sender says it is whole, yet it stops short of the tile's edges: a
  // stream of another size (the marker packet carries the last line).
  if (!complete && by_marker && !(extent_ == options_.tile)) {
    ++stats_.frames_wrong_geometry;
    stats_.arriving = extent_;
  }
  have_frame_ = false;
  have_finished_ = true;
  finished_timestamp_ = timestamp_;
  // A frame in repair that repair_frames newer frames have passed is given up.
  ++frames_ended_;
  for (Repair& r : repairs_)
    if (r.valid && frames_ended_ - r.parked_at >= options_.repair_frames)
      EndRepair(r, /*complete=*/false);
  if (!complete && loss_) return ParkForRepair();
  ++(complete ? stats_.frames_complete : stats_.frames_incomplete);
  if (!complete && !options_.show_partial) return;  // hold the previous picture
  // Queue the assembled buffer and assemble next into one that is neither
  // queued, the consumer's nor waiting for repair.
  std::lock_guard lock(handoff_mu_);
  Enqueue(assembling_, timestamp_, complete);
  assembling_ = FreeBuffer();
}

// In timestamp order: a repaired frame may be older than frames queued
// after it ended.
void FrameAssembler::Enqueue(int buffer, uint32_t timestamp, bool complete) {
  if (queued_ == queue_.size()) PopQueue(1);  // a full queue drops its oldest frame
  size_t at = queued_;
  while (at > 0 && static_cast<int32_t>(queue_[at - 1].info.timestamp - timestamp) > 0) {
    queue_[at] = queue_[at - 1];
    --at;
  }
  queue_[at] = {buffer, {buffers_[buffer].data(), timestamp, complete}};
  ++queued_;
  just_finished_ = queue_[at].info;
  has_just_finished_ = true;
}

int FrameAssembler::FreeBuffer() const {
  for (int b = 0; b < static_cast<int>(buffers_.size()); ++b) {
    bool used = b == consumer_;
    for (const Repair& r : repairs_) used = used || (r.valid && b == r.buffer);
    for (size_t i = 0; i < queued_; ++i) used = used || queue_[i].buffer == b;
    if (!used) return b;
  }
  return assembling_;  // unreachable: there is one buffer more than can be in use
}

// The frame just ended incomplete waits for its retransmissions in a
// buffer of its own, with its coverage; assembling goes on in a free one.
// Finish gave up the frames repair_frames newer ones passed, so a slot is
// free.
void FrameAssembler::ParkForRepair() {
  Repair& r =
      *std::find_if(repairs_.begin(), repairs_.end(), [](const Repair& x) { return !x.valid; });
  std::swap(coverage_, r.coverage);  // the repair map was left clear
  r.valid = true;
  r.buffer = assembling_;
  r.timestamp = timestamp_;
  r.reach = high_water_;
  r.first_sequence = frame_first_sequence_;
  r.parked_at = frames_ended_;
  high_water_ = 0;  // coverage_ is clear
  std::lock_guard lock(handoff_mu_);
  assembling_ = FreeBuffer();
}

void FrameAssembler::EndRepair(Repair& r, bool complete) {
  r.valid = false;
  r.coverage.Clear(r.reach / kPgroupBytes);
  if (!complete) {
    ++stats_.frames_incomplete;
    // What it still missed can no longer be shown: not asked for again
    // (up to the first packet of the oldest frame still wanted).
    uint64_t wanted = frame_first_sequence_;
    for (const Repair& other : repairs_)
      if (other.valid) wanted = std::min(wanted, other.first_sequence);
    if (plan_) loss_->GiveUpBefore(wanted);
    return;
  }
  ++stats_.frames_complete;
  ++stats_.frames_repaired;
  std::lock_guard lock(handoff_mu_);
  Enqueue(r.buffer, r.timestamp, true);
}

void FrameAssembler::PopQueue(size_t n) {
  for (size_t i = n; i < queued_; ++i) queue_[i - n] = queue_[i];
  queued_ -= n;
}

AddResult FrameAssembler::Add(std::span<const std::byte> packet, const sockaddr_storage* from) {
  if (is_retransmission(packet)) return AddRetransmission(packet, from);
  has_just_finished_ = false;
  if (Foreign(from)) {
    ++stats_.foreign_source;
    return AddResult::kForeignSource;
  }
  if (LooksLikeRtcp(packet)) return AddRtcp(packet);
  Rfc4175View v;
  if (const ParseError e = ParseRfc4175(packet, options_.tile, &v); e != ParseError::kOk) {
    ++stats_.malformed[static_cast<size_t>(e)];
    if (e == ParseError::kLineBeyondHeight || e == ParseError::kSegmentBeyondWidth)
      NoteBeyondTile(packet);
    return AddResult::kMalformed;
  }
  return Admit(v, nullptr);
}

AddResult FrameAssembler::AddParsed(const Rfc4175View& v, const std::byte* placed_in,
                                    const sockaddr_storage* from) {
  has_just_finished_ = false;
  if (Foreign(from)) {
    ++stats_.foreign_source;
    return AddResult::kForeignSource;
  }
  return Admit(v, placed_in);
}

AddResult FrameAssembler::Admit(const Rfc4175View& v, const std::byte* placed_in) {
  if (options_.payload_type && v.rtp.payload_type != *options_.payload_type) {
    ++stats_.wrong_payload_type;
    return AddResult::kWrongPayloadType;
  }
  if (ssrc_ && v.rtp.ssrc != *ssrc_) {
    if (!options_.ssrc && ++foreign_streak_ >= kRelockStreak) {
      ssrc_.reset();  // a third-party sender restarted with a new SSRC
      ResetSequence();
      have_frame_ = have_finished_ = false;
    } else {
      ++stats_.foreign_ssrc;
      return AddResult::kForeignSsrc;
    }
  }
  foreign_streak_ = 0;
  if (!ssrc_) ssrc_ = v.rtp.ssrc;
  const SequenceVerdict order = JudgeSequence(v.rtp.sequence, v.rtp.timestamp);
  switch (order.order) {
    case Order::kDuplicate:
      ++stats_.duplicate;
      return AddResult::kDuplicate;
    case Order::kProbation:
      return Hold(v, HeldAs::kProbation);
    case Order::kJump:
      return Hold(v, HeldAs::kJump);
    case Order::kNewStream:
      return AdmitNewStream(order.held, v, placed_in);
    case Order::kAhead:
    case Order::kBehind:
      break;
  }
  switch (JudgeTimestamp(v.rtp.timestamp, order.order)) {
    case Stamp::kLate:
      CommitSequence(order);  // it did arrive: not lost, only too late
      // Passed by the next frame's first packets (a path that reorders):
      // as good as a retransmission while its frame waits for repair.
      if (WriteToRepair(v)) {
        ++stats_.packets;
        stats_.bytes += v.pixel_bytes;
        return AddResult::kOk;
      }
      ++stats_.late;
      return AddResult::kLate;
    case Stamp::kRefused:
      ++stats_.timestamp_out_of_sequence;
      return AddResult::kTimestampOutOfSequence;
    case Stamp::kNewFrame:
      if (order.extended != max_sequence_ + 1) return AdmitNewFrame(v, order, placed_in);
      break;
    case Stamp::kSameFrame:
      break;
  }
  CommitSequence(order);
  const AddResult result = Write(v, placed_in);
  AdmitHeldFollowers();
  return result;
}

// A new frame's packets that passed the one before them (a path that
// reorders) wait as a new timestamp after a gap; once the gap is filled
// (the frame's first packet came), they follow in sequence, and are
// written rather than counted lost when the next one comes.
void FrameAssembler::AdmitHeldFollowers() {
  if (!new_frame_held_) return;
  for (bool admitted = true; admitted && have_frame_;) {
    admitted = false;
    for (Held& h : held_) {
      if (!h.valid || h.as != HeldAs::kNewFrame || h.view.rtp.timestamp != timestamp_ ||
          h.view.rtp.sequence != static_cast<uint16_t>(max_sequence_ + 1))
        continue;
      h.valid = false;  // its bytes stay until another is held
      --HeldCount(h.as);
      Admit(h.view, nullptr);
      admitted = true;
      break;
    }
  }
  new_frame_held_ = std::any_of(held_.begin(), held_.end(),
                                [](const Held& h) { return h.valid && h.as == HeldAs::kNewFrame; });
}

// Writes an admitted packet into its frame: the frame before it ends first
// if its marker was lost.
AddResult FrameAssembler::Write(const Rfc4175View& v, const std::byte* placed_in) {
  const uint32_t ts = v.rtp.timestamp;
  if (have_frame_ && ts != timestamp_) Finish(/*by_marker=*/false);
  if (!have_frame_) {
    StartFrame(ts);
    if (plan_ && loss_)
      frame_first_sequence_ =
          Extend(v.rtp.sequence) - plan_->PacketAt(FirstPixelByte(v, options_.tile.width));
  }
  ZeroedBuffer& frame = buffers_[assembling_];
  if (placed_in != frame.data()) CopySegmentsToFrame(v, options_.tile, frame.span());
  // else the kernel put the pixels in place.
  Mark(v, coverage_, &high_water_, &extent_);
  ++stats_.packets;
  stats_.bytes += v.pixel_bytes;
  if (plan_ && loss_ && Extend(v.rtp.sequence) == max_sequence_) {
    newest_offset_ = FirstPixelByte(v, options_.tile.width);
    tail_open_ = true;
  }
  if (v.rtp.marker) Finish(/*by_marker=*/true);
  return AddResult::kOk;
}

void FrameAssembler::Mark(const Rfc4175View& v, CoverageMap& coverage, size_t* reach,
                          TileGeometry* extent) {
  const std::byte* header = v.line_headers.data();
  for (uint32_t i = 0; i < v.segment_count; ++i, header += kLineHeaderSize) {
    const LineHeader h = LoadLineHeader(header);
    const size_t first = size_t{h.line} * options_.tile.width + h.offset;
    const size_t count = h.length / kPgroupBytes;
    coverage.Mark(first, count);
    extent->width = std::max<uint32_t>(extent->width, h.offset + static_cast<uint32_t>(count));
    extent->height = std::max<uint32_t>(extent->height, h.line + 1u);
    *reach = std::max(*reach, (first + count) * kPgroupBytes);
  }
}

AddResult FrameAssembler::AddRetransmission(std::span<const std::byte> packet,
                                            const sockaddr_storage* from) {
  has_just_finished_ = false;
  if (Foreign(from)) {
    ++stats_.foreign_source;
    return AddResult::kForeignSource;
  }
  Rfc4175View v;
  uint16_t rtx_sequence = 0;
  if (const ParseError e = ParseRtx(packet, options_.tile, &v, &rtx_sequence);
      e != ParseError::kOk) {
    ++stats_.malformed[static_cast<size_t>(e)];
    return AddResult::kMalformed;
  }
  ++stats_.retransmitted;
  // RFC 4588 5.3: a retransmission belongs to the stream whose missing
  // packet its original sequence number names.
  const bool missing = loss_ && have_sequence_ && loss_->Arrived(Extend(v.rtp.sequence));
  const uint32_t ts = v.rtp.timestamp;
  if (missing && have_frame_ && ts == timestamp_) {
    CopySegmentsToFrame(v, options_.tile, buffers_[assembling_].span());
    Mark(v, coverage_, &high_water_, &extent_);
    if (coverage_.full()) Finish(/*by_marker=*/false);  // its marker was what was lost
  } else if (!missing || !WriteToRepair(v)) {
    ++stats_.retransmit_late;
    return AddResult::kLate;
  }
  ++stats_.recovered;
  ++stats_.packets;
  stats_.bytes += v.pixel_bytes;
  return AddResult::kOk;
}

// A missing packet of a frame waiting for repair goes into it; false when
// it is of no such frame.
bool FrameAssembler::WriteToRepair(const Rfc4175View& v) {
  for (Repair& r : repairs_) {
    if (!r.valid || v.rtp.timestamp != r.timestamp) continue;
    TileGeometry extent;
    CopySegmentsToFrame(v, options_.tile, buffers_[r.buffer].span());
    Mark(v, r.coverage, &r.reach, &extent);
    if (r.coverage.full()) EndRepair(r, /*complete=*/true);
    return true;
  }
  return false;
}

// A packet beyond the tile: how far the stream really reaches, for the
// report (rare: a stream of another size, or a broken packet).
void FrameAssembler::NoteBeyondTile(std::span<const std::byte> packet) {
  Rfc4175View v;
  if (ParseRfc4175(packet, {kMaxTileDimension, kMaxTileDimension}, &v) != ParseError::kOk) return;
  const std::byte* header = v.line_headers.data();
  for (uint32_t i = 0; i < v.segment_count; ++i, header += kLineHeaderSize) {
    const LineHeader h = LoadLineHeader(header);
    stats_.arriving.width =
        std::max<uint32_t>(stats_.arriving.width, h.offset + h.length / kPgroupBytes);
    stats_.arriving.height = std::max<uint32_t>(stats_.arriving.height, h.line + 1u);
  }
}

std::optional<ReadyFrame> FrameAssembler::TakeReady() {
  std::lock_guard lock(handoff_mu_);
  if (queued_ == 0) return std::nullopt;
  const Queued newest = queue_[queued_ - 1];
  queued_ = 0;
  // A frame repaired after a newer one was taken is not shown backwards.
  if (taken_any_ && TimestampDelta(newest.info.timestamp, last_taken_) <= 0) return std::nullopt;
  taken_any_ = true;
  last_taken_ = newest.info.timestamp;
  consumer_ = newest.buffer;
  return newest.info;
}

std::optional<ReadyFrame> FrameAssembler::TakeFrame(uint32_t timestamp, bool incomplete_ok) {
  std::lock_guard lock(handoff_mu_);
  size_t older = 0;
  while (older < queued_ && TimestampDelta(queue_[older].info.timestamp, timestamp) < 0) ++older;
  PopQueue(older);
  if (queued_ == 0 || queue_[0].info.timestamp != timestamp) return std::nullopt;
  if (!queue_[0].info.complete && !incomplete_ok) return std::nullopt;
  const Queued q = queue_[0];
  PopQueue(1);
  consumer_ = q.buffer;
  return q.info;
}

}  // namespace tilestream
