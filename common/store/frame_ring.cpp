#include "common/store/frame_ring.h"

#include <fmt/format.h>
#include <time.h>

#include <chrono>
#include <utility>

#include "common/base/clock.h"

namespace tilestream {
namespace {

std::chrono::steady_clock::time_point SteadyFromMonotonic(int64_t ns) {
  // steady_clock is CLOCK_MONOTONIC on Linux.
  return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(ns));
}

}  // namespace

Result<std::unique_ptr<DiskFrameRing>> DiskFrameRing::Open(const MovieManifest& movie,
                                                           uint32_t tile_index, uint32_t slots,
                                                           bool direct, uint64_t first,
                                                           uint32_t keep,
                                                           const DiskFaults& faults) {
  if (slots < 3 || keep < 1 || slots < keep + 2)
    return Status::InvalidArgument(
        "the frame ring needs at least 3 slots, and 2 beyond those it keeps");
  auto reader = TileReader::Open(movie, tile_index, direct, faults);
  if (!reader.ok()) return reader.status();
  std::unique_ptr<DiskFrameRing> ring(new DiskFrameRing(std::move(reader).value(), movie.frames));
  ring->slots_.resize(slots);
  for (Slot& s : ring->slots_) {
    auto b = AlignedBuffer::Allocate(movie.frame_stride);
    if (!b.ok()) return b.status();
    s.buffer = std::move(b).value();
  }
  ring->keep_ = keep;
  ring->next_frame_ = ring->clock_frame_ = first % std::max<uint64_t>(1, movie.frames);
  ring->thread_ = std::thread([r = ring.get()] { r->ReadLoop(); });
  return ring;
}

DiskFrameRing::~DiskFrameRing() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  reader_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void DiskFrameRing::ReadLoop() {
  std::unique_lock lock(mu_);
  while (!stop_ && !failed_) {
    Slot* slot = nullptr;
    bool have_next = false;  // paused: read the frame wanted once, then rest
    for (Slot& s : slots_) {
      if (s.state == SlotState::kFree)
        slot = &s;
      else if (s.frame == next_frame_ &&
               (s.generation == generation_ || s.state == SlotState::kHeld ||
                s.state == SlotState::kInUse))
        have_next = true;
    }
    if (!slot || (step_ == 0 && have_next)) {
      reader_cv_.wait(lock);
      continue;
    }
    const uint64_t frame = next_frame_ = OnTime(next_frame_, MonotonicNs());
    const uint64_t generation = generation_;
    const auto n = static_cast<int64_t>(frames_);
    next_frame_ = static_cast<uint64_t>(((static_cast<int64_t>(next_frame_) + step_) % n + n) % n);
    slot->state = SlotState::kFilling;
    slot->frame = frame;
    slot->generation = generation;
    lock.unlock();
    const int64_t t0 = MonotonicNs();
    const Status s = reader_.ReadFrame(frame, slot->buffer.span());
    const int64_t t1 = MonotonicNs();
    lock.lock();
    stats_.read_ns += t1 - t0;
    read_mean_ns_ = read_mean_ns_ > 0 ? (3 * read_mean_ns_ + (t1 - t0)) / 4 : t1 - t0;
    if (!s.ok()) {
      ++stats_.errors;
      error_ = s.message();
      failed_ = true;
      slot->state = SlotState::kFree;
      sender_cv_.notify_all();
      break;
    }
    stats_.frames_read++;
    stats_.bytes_read += reader_.frame_stride();
    if (generation != generation_) {
      slot->state = SlotState::kFree;  // a seek happened meanwhile
      continue;
    }
    slot->state = SlotState::kReady;
    slot->sequence = sequence_++;
    sender_cv_.notify_all();
  }
}

// Signed distance from `from` to `to` in steps of play, the movie looping:
// in (-frames/2, frames/2]. REQUIRES: step_ != 0.
int64_t DiskFrameRing::StepsFrom(uint64_t from, uint64_t to) const {
  const auto n = static_cast<int64_t>(frames_);
  int64_t d = ((static_cast<int64_t>(to) - static_cast<int64_t>(from)) % n + n) % n;
  if (step_ < 0) d = (n - d) % n;
  if (d > n / 2) d -= n;
  return d / (step_ < 0 ? -step_ : step_);
}

// `frame`, or the first frame after it that a read starting `now` brings
// before its tick gives up on it (the class comment). REQUIRES: mu_ held.
uint64_t DiskFrameRing::OnTime(uint64_t frame, int64_t now) {
  if (step_ == 0 || interval_ns_ <= 0 || read_mean_ns_ <= 0) return frame;
  const int64_t ready = now + read_mean_ns_ + read_mean_ns_ / 4 - interval_ns_ / 2;
  const int64_t steps = StepsFrom(clock_frame_, frame);
  if (ready <= clock_due_ns_ + steps * interval_ns_) return frame;
  const int64_t need = (ready - clock_due_ns_ + interval_ns_ - 1) / interval_ns_;
  const auto n = static_cast<int64_t>(frames_);
  if ((need - steps) * (step_ < 0 ? -step_ : step_) > n / 2)
    return frame;  // a loop of the movie: no use
  const int64_t to = ((static_cast<int64_t>(clock_frame_) + need * step_) % n + n) % n;
  stats_.skipped += static_cast<uint64_t>(need - steps);
  skip_from_ = frame;
  skip_to_ = static_cast<uint64_t>(to);
  return skip_to_;
}

void DiskFrameRing::SetPlayClock(uint64_t frame, int64_t due_ns, int64_t interval_ns) {
  std::lock_guard lock(mu_);
  clock_frame_ = frame;
  clock_due_ns_ = due_ns;
  interval_ns_ = interval_ns;
}

bool DiskFrameRing::Skipped(uint64_t index) const {
  std::lock_guard lock(mu_);
  return InSkip(index);
}

// REQUIRES: mu_ held.
bool DiskFrameRing::InSkip(uint64_t index) const {
  if (step_ == 0 || skip_from_ == skip_to_) return false;
  const int64_t d = StepsFrom(skip_from_, index);
  return d >= 0 && d < StepsFrom(skip_from_, skip_to_);
}

void DiskFrameRing::SetReadAhead(int32_t step) {
  std::lock_guard lock(mu_);
  if (step == step_) return;
  step_ = step;
  skip_from_ = skip_to_;
  reader_cv_.notify_all();
}

const std::byte* DiskFrameRing::Acquire(uint64_t index, int64_t deadline_ns) {
  std::unique_lock lock(mu_);
  if (!held_.empty() && slots_[static_cast<size_t>(held_.back())].frame == index) {  // again
    in_use_ = held_.back();
    held_.pop_back();
    slots_[static_cast<size_t>(in_use_)].state = SlotState::kInUse;
    return slots_[static_cast<size_t>(in_use_)].buffer.data();
  }
  for (;;) {
    // The wanted frame, and every ready frame read before it (skipped).
    int found = -1;
    for (size_t i = 0; i < slots_.size(); ++i)
      if (slots_[i].state == SlotState::kReady && slots_[i].frame == index)
        found = static_cast<int>(i);
    if (found >= 0) {
      if (skip_from_ != skip_to_ && StepsFrom(skip_to_, index) >= 0)
        skip_from_ = skip_to_;  // past it
      for (Slot& s : slots_)
        if (s.state == SlotState::kReady && s.sequence < slots_[found].sequence)
          s.state = SlotState::kFree;
      slots_[found].state = SlotState::kInUse;
      in_use_ = found;
      reader_cv_.notify_all();
      return slots_[found].buffer.data();
    }
    if (failed_ || InSkip(index)) return nullptr;  // read before the error, or skipped: not coming
    // Not read yet: whatever is ready was read before it (skipped frames),
    // unless `index` is neither being read nor next, which is a seek.
    bool coming = next_frame_ == index;
    for (const Slot& s : slots_)
      if (s.state == SlotState::kFilling && s.frame == index && s.generation == generation_)
        coming = true;
    for (Slot& s : slots_)
      if (s.state == SlotState::kReady) s.state = SlotState::kFree;
    if (!coming) {
      skip_from_ = skip_to_;
      next_frame_ = index % frames_;
      ++generation_;
      ++stats_.restarts;
    }
    reader_cv_.notify_all();
    if (sender_cv_.wait_until(lock, SteadyFromMonotonic(deadline_ns)) == std::cv_status::timeout) {
      ++stats_.stalls;
      return nullptr;
    }
  }
}

// The released frame stays held (never read into) until `keep` more are
// released: after a read error LastFrame() is intact, and the sender may
// send its packets again.
void DiskFrameRing::Release() {
  std::lock_guard lock(mu_);
  if (in_use_ < 0) return;
  held_.push_back(in_use_);
  slots_[static_cast<size_t>(in_use_)].state = SlotState::kHeld;
  in_use_ = -1;
  for (; held_.size() > keep_; held_.pop_front())
    slots_[static_cast<size_t>(held_.front())].state = SlotState::kFree;
  reader_cv_.notify_all();
}

const std::byte* DiskFrameRing::LastFrame() const {
  std::lock_guard lock(mu_);
  const int last = in_use_ >= 0 ? in_use_ : held_.empty() ? -1 : held_.back();
  return last >= 0 ? slots_[static_cast<size_t>(last)].buffer.data() : nullptr;
}

std::string DiskFrameRing::error() const {
  std::lock_guard lock(mu_);
  return error_;
}

FrameSourceStats DiskFrameRing::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace tilestream
