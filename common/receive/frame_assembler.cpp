#include "common/receive/frame_assembler.h"

#include <algorithm>
#include <cstring>

#include "common/wire/rtcp_feedback.h"

// What comes in: a packet admitted, its pixels written, a retransmission
// placed. The sequence and the held packets are in frame_sequence.cpp, the
// frames' pool, queue and repair in frame_queue.cpp.

namespace tilestream {
namespace {

constexpr uint32_t kRelockStreak = 1000;

}  // namespace

FrameAssembler::FrameAssembler(const AssemblerOptions& options)
    : options_(options),
      coverage_(Pgroups(options.tile)),
      seen_(kWindow / 64, 0),
      ssrc_(options.ssrc) {
  held_bytes_.resize(kHeldSlots * kMaxHeldBytes);
  options_.queue_depth = std::clamp<size_t>(options_.queue_depth, 1, 32);
  queue_.resize(options_.queue_depth);
  if (options_.show_partial) options_.rtx_payload_type.reset();
  if (options_.rtx_payload_type) loss_ = std::make_unique<LossTracker>(options_.loss);
  options_.repair_frames =
      loss_ ? std::clamp<size_t>(options_.repair_frames, 1, kMaxRepairFrames) : 0;
  repairs_.resize(options_.repair_frames);
  for (Repair& r : repairs_) r.coverage = CoverageMap(Pgroups(options.tile));
  const size_t buffers = options_.queue_depth + 2 + options_.repair_frames;
  buffers_.reserve(buffers);
  for (size_t b = 0; b < buffers; ++b) {
    buffers_.emplace_back(options_.tile.frame_bytes());
    if (options_.prefault) std::memset(buffers_.back().data(), 0, buffers_.back().size());
  }
}

AddResult FrameAssembler::AddRtcp(std::span<const std::byte> packet) {
  if (ssrc_ && SaysBye(packet, *ssrc_)) {
    ++stats_.byes;
    MarkTailLost();
  }
  return AddResult::kRtcp;
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
      std::lock_guard lock(handoff_mu_);
      taken_any_ = false;  // its timestamps start anywhere, behind the old stream's too
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

// Writes an admitted packet into its frame: the frame before it ends first
// if its marker was lost.
AddResult FrameAssembler::Write(const Rfc4175View& v, const std::byte* placed_in) {
  const uint32_t ts = v.rtp.timestamp;
  if (have_frame_ && ts != timestamp_) Finish(/*by_marker=*/false);
  if (!have_frame_) {
    StartFrame(ts);
    if (plan_ && loss_)
      frame_first_sequence_ =
          Extend(v.rtp.sequence) - plan_->PacketAt(FirstPixelByte(v, options_.tile));
  }
  ZeroedBuffer& frame = buffers_[assembling_];
  if (placed_in != frame.data()) CopySegmentsToFrame(v, options_.tile, frame.span());
  // else the kernel put the pixels in place.
  Mark(v, coverage_, &high_water_, &extent_);
  ++stats_.packets;
  stats_.bytes += v.pixel_bytes;
  if (plan_ && loss_ && Extend(v.rtp.sequence) == max_sequence_) {
    newest_offset_ = FirstPixelByte(v, options_.tile);
    tail_open_ = true;
  }
  if (v.rtp.marker) Finish(/*by_marker=*/true);
  return AddResult::kOk;
}

void FrameAssembler::Mark(const Rfc4175View& v, CoverageMap& coverage, size_t* reach,
                          TileGeometry* extent) {
  const TileGeometry& tile = options_.tile;
  const std::byte* header = v.line_headers.data();
  for (uint32_t i = 0; i < v.segment_count; ++i, header += kLineHeaderSize) {
    const LineHeader h = LoadLineHeader(header);
    const size_t first = (size_t{h.line} * tile.width + h.offset) / tile.pgroup_pixels();
    const size_t count = h.length / tile.pgroup_bytes();
    coverage.Mark(first, count);
    extent->width = std::max<uint32_t>(
        extent->width, h.offset + static_cast<uint32_t>(count) * tile.pgroup_pixels());
    extent->height = std::max<uint32_t>(extent->height, h.line + 1u);
    *reach = std::max(*reach, (first + count) * tile.pgroup_bytes());
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
  const TileGeometry widest{kMaxTileDimension - kMaxTileDimension % options_.tile.pgroup_pixels(),
                            kMaxTileDimension, options_.tile.sampling};
  if (ParseRfc4175(packet, widest, &v) != ParseError::kOk) return;
  const std::byte* header = v.line_headers.data();
  for (uint32_t i = 0; i < v.segment_count; ++i, header += kLineHeaderSize) {
    const LineHeader h = LoadLineHeader(header);
    stats_.arriving.width = std::max<uint32_t>(
        stats_.arriving.width, h.offset + static_cast<uint32_t>(h.length / widest.pgroup_bytes()) *
                                              widest.pgroup_pixels());
    stats_.arriving.height = std::max<uint32_t>(stats_.arriving.height, h.line + 1u);
  }
}

}  // namespace tilestream
