// The frame assembler's frames: the pool of buffers, a frame started and
// finished, the queue handed on in timestamp order, and the frames held in
// repair.
#include <algorithm>
#include <cstring>

#include "common/receive/frame_assembler.h"

namespace tilestream {

void FrameAssembler::StartFrame(uint32_t timestamp) {
  have_frame_ = true;
  timestamp_ = timestamp;
  extent_ = {};
  coverage_.Clear(high_water_ / options_.tile.pgroup_bytes());
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
  if (!complete && by_marker &&
      (extent_.width != options_.tile.width || extent_.height != options_.tile.height)) {
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
  r.coverage.Clear(r.reach / options_.tile.pgroup_bytes());
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
