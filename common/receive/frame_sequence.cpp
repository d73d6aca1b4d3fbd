// The frame assembler's sequence admission: which packets are in order,
// behind, duplicates or lost, and the packets held until the next one
// follows them (a new stream, a jump, a new frame's first packet).
#include <algorithm>
#include <cstring>

#include "common/receive/frame_assembler.h"

namespace tilestream {
namespace {

constexpr uint64_t kSequenceBase = uint64_t{1} << 40;  // room to go back
// The most packets of a stream's first frame asked for before its first
// packet: a burst of loss, several GSO messages of 7.
constexpr uint32_t kMaxHead = 64;

}  // namespace

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
  h.valid = headers + v.pixel_bytes <= kMaxHeldBytes;
  if (h.valid) {
    h.as = as;
    std::byte* bytes = held_bytes_.data() + slot * kMaxHeldBytes;
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
    const uint32_t k = plan_->PacketAt(FirstPixelByte(first.view, options_.tile));
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

}  // namespace tilestream
