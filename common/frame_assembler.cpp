#include "common/frame_assembler.h"

#include <algorithm>
#include <cstring>

namespace tilestream {
namespace {

constexpr uint64_t kSequenceBase = uint64_t{1} << 40;  // room to go back
constexpr uint64_t kResyncGap = 16384;  // a bigger jump is a new stream, not loss
constexpr uint32_t kRelockStreak = 1000;

// Signed distance between RTP timestamps, modulo 2^32.
int32_t TimestampDelta(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b); }

}  // namespace

FrameAssembler::FrameAssembler(const AssemblerOptions& options)
    : options_(options),
      coverage_(size_t{options.tile.width} * options.tile.height),
      seen_(kWindow / 64, 0),
      ssrc_(options.ssrc) {
  for (auto& b : buffers_) b.assign(options_.tile.frame_bytes(), std::byte{0});
}

bool FrameAssembler::AcceptSequence(uint16_t sequence) {
  auto bit = [this](uint64_t s) -> uint64_t& { return seen_[(s % kWindow) / 64]; };
  auto mask = [](uint64_t s) { return uint64_t{1} << (s % 64); };
  if (!have_sequence_) {
    have_sequence_ = true;
    max_sequence_ = kSequenceBase + sequence;
    std::fill(seen_.begin(), seen_.end(), 0);
    bit(max_sequence_) |= mask(max_sequence_);
    return true;
  }
  // The extended sequence nearest to the highest seen so far.
  uint64_t ext = (max_sequence_ & ~uint64_t{0xffff}) | sequence;
  if (ext + 0x8000 < max_sequence_) ext += 0x10000;
  else if (ext > max_sequence_ + 0x8000) ext -= 0x10000;

  if (ext > max_sequence_) {
    const uint64_t gap = ext - max_sequence_ - 1;
    if (gap >= kResyncGap) {  // the sender restarted: start over
      have_sequence_ = false;
      return AcceptSequence(sequence);
    }
    stats_.lost += gap;
    if (ext - max_sequence_ >= kWindow) {
      std::fill(seen_.begin(), seen_.end(), 0);
    } else {
      for (uint64_t s = max_sequence_ + 1; s < ext; ++s) bit(s) &= ~mask(s);
    }
    max_sequence_ = ext;
    bit(ext) |= mask(ext);
    return true;
  }
  if (max_sequence_ - ext >= kWindow) {  // too old to tell: a very late packet
    ++stats_.reordered;
    return true;
  }
  if (bit(ext) & mask(ext)) return false;
  bit(ext) |= mask(ext);
  ++stats_.reordered;
  if (stats_.lost > 0) --stats_.lost;  // it was counted lost when the gap appeared
  return true;
}

void FrameAssembler::StartFrame(uint32_t timestamp) {
  have_frame_ = true;
  timestamp_ = timestamp;
  coverage_.Clear(high_water_ / kPgroupBytes);
  high_water_ = 0;
  // Partial frames show the previous picture where packets are missing.
  std::lock_guard lock(handoff_mu_);
  const int previous = queued_ ? queue_[queued_ - 1].buffer : consumer_;
  if (options_.show_partial && previous >= 0)
    std::memcpy(buffers_[assembling_].data(), buffers_[previous].data(), buffers_[assembling_].size());
}

void FrameAssembler::Finish() {
  const bool complete = coverage_.full();
  ++(complete ? stats_.frames_complete : stats_.frames_incomplete);
  have_frame_ = false;
  have_finished_ = true;
  finished_timestamp_ = timestamp_;
  if (!complete && !options_.show_partial) return;  // hold the previous picture
  // Queue the assembled buffer (a full queue drops its oldest frame) and
  // assemble next into one that is neither queued nor the consumer's.
  std::lock_guard lock(handoff_mu_);
  if (queued_ == kQueue) PopQueue(1);
  queue_[queued_++] = {assembling_, {buffers_[assembling_].data(), timestamp_, complete}};
  just_finished_ = queue_[queued_ - 1].info;
  has_just_finished_ = true;
  for (int b = 0; b < static_cast<int>(buffers_.size()); ++b) {
    bool used = b == consumer_;
    for (size_t i = 0; i < queued_; ++i) used = used || queue_[i].buffer == b;
    if (!used) {
      assembling_ = b;
      break;
    }
  }
}

void FrameAssembler::PopQueue(size_t n) {
  for (size_t i = n; i < queued_; ++i) queue_[i - n] = queue_[i];
  queued_ -= n;
}

AddResult FrameAssembler::Add(std::span<const std::byte> packet, const sockaddr_storage* from) {
  has_just_finished_ = false;
  if (has_source_ && from && !source_.SameHost(*from)) {
    ++stats_.foreign_source;
    return AddResult::kForeignSource;
  }
  Rfc4175View v;
  if (const ParseError e = ParseRfc4175(packet, options_.tile, &v); e != ParseError::kOk) {
    ++stats_.malformed[static_cast<size_t>(e)];
    return AddResult::kMalformed;
  }
  return Admit(v, nullptr);
}

AddResult FrameAssembler::AddParsed(const Rfc4175View& v, const std::byte* placed_in, const sockaddr_storage* from) {
  has_just_finished_ = false;
  if (has_source_ && from && !source_.SameHost(*from)) {
    ++stats_.foreign_source;
    return AddResult::kForeignSource;
  }
  return Admit(v, placed_in);
}

AddResult FrameAssembler::Admit(const Rfc4175View& v, const std::byte* placed_in) {
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
  if (!AcceptSequence(v.rtp.sequence)) {
    ++stats_.duplicate;
    return AddResult::kDuplicate;
  }
  const uint32_t ts = v.rtp.timestamp;
  if (have_frame_ && ts != timestamp_) {
    if (TimestampDelta(ts, timestamp_) < 0) {
      ++stats_.late;
      return AddResult::kLate;
    }
    Finish();  // its marker was lost
  }
  if (!have_frame_) {
    if (have_finished_ && TimestampDelta(ts, finished_timestamp_) <= 0) {
      ++stats_.late;
      return AddResult::kLate;
    }
    StartFrame(ts);
  }
  std::vector<std::byte>& frame = buffers_[assembling_];
  if (placed_in != frame.data()) CopySegmentsToFrame(v, options_.tile, frame);
  // else the kernel put the pixels in place.
  const std::byte* header = v.line_headers.data();
  for (uint32_t i = 0; i < v.segment_count; ++i, header += kLineHeaderSize) {
    const LineHeader h = LoadLineHeader(header);
    const size_t first = size_t{h.line} * options_.tile.width + h.offset;
    const size_t count = h.length / kPgroupBytes;
    coverage_.Mark(first, count);
    high_water_ = std::max(high_water_, (first + count) * kPgroupBytes);
  }
  ++stats_.packets;
  stats_.bytes += v.pixel_bytes;
  if (v.rtp.marker) Finish();
  return AddResult::kOk;
}

std::optional<ReadyFrame> FrameAssembler::TakeReady() {
  std::lock_guard lock(handoff_mu_);
  if (queued_ == 0) return std::nullopt;
  const Queued newest = queue_[queued_ - 1];
  queued_ = 0;
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
