// Frames of one tile for the sender: from the tile store through a
// read-ahead ring, or from memory.
//
// DiskFrameRing: a reader thread reads frames with O_DIRECT ahead of
// playback into a ring of aligned (huge-page) buffers, in the direction and
// at the stride of play (SetReadAhead), so the disk never waits for the
// network and the network never for the disk. The frame the sender last
// released is handed out again without a read (paused, slow motion). The sender
// Acquire()s the frame a tick asks for and Release()s it after sending.
// Frames the sender skipped are dropped from the ring; a frame that is not
// the next one the reader expected (a seek) empties the ring and restarts the
// reader there. A read error is reported once (error()); the reader stops and
// the ring then hands out the last frame it delivered, so the tile holds its
// picture.
//
// A disk slower than play: given the play clock (SetPlayClock: the frame a
// tick asks for, when that tick is due, the interval), the reader never
// starts a frame it cannot bring before its tick gives up on it (its reads'
// recent mean time, plus a quarter). It skips ahead to the first frame it
// can bring, and a tick asking for a frame so skipped is answered at once
// (Skipped). Chasing the frame due next, a disk at 36% of the wall's rate
// showed none; skipping, it showed 21% of the ticks, the tiles in step.
//
// MemoryFrames: frames held in memory, for benchmarks of the network alone.
//
// Acquire/Release are called by one thread (the sender); the reader thread is
// internal. They lock a mutex once per frame, never per packet.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/base/aligned_buffer.h"
#include "common/base/result.h"
#include "common/store/tile_store.h"

namespace tilestream {

struct FrameSourceStats {
  uint64_t frames_read = 0;
  uint64_t bytes_read = 0;
  int64_t read_ns = 0;    // time spent in reads
  uint64_t stalls = 0;    // Acquire timed out: the disk was late
  uint64_t restarts = 0;  // reader moved: a seek, or a skip past the read-ahead
  uint64_t errors = 0;
  uint64_t skipped = 0;  // frames not read: the disk could not bring them in time
};

class FrameProvider {
 public:
  virtual ~FrameProvider() = default;
  // The pixels of frame `index` (tile.frame_bytes() valid bytes), waiting
  // until `deadline_ns` (CLOCK_MONOTONIC) at most; nullptr if not ready.
  // REQUIRES: the previous Acquire was Released.
  virtual const std::byte* Acquire(uint64_t index, int64_t deadline_ns) = 0;
  virtual void Release() = 0;
  // Frames to read ahead per frame sent: 1 plays forwards, -1 backwards, 2
  // skips every other frame, 0 (paused) reads nothing new.
  virtual void SetReadAhead(int32_t /*step*/) {}
  // Play: `frame` is due at `due_ns`, the frames after it (at the read-ahead
  // step) one `interval_ns` apart; a frame is given up interval_ns / 2 late.
  virtual void SetPlayClock(uint64_t /*frame*/, int64_t /*due_ns*/, int64_t /*interval_ns*/) {}
  // The reader skipped `index`: too slow a disk to bring it in time.
  virtual bool Skipped(uint64_t /*index*/) const { return false; }
  // After a read error: the last frame delivered (nullptr if none), which
  // stays valid because nothing is read any more.
  virtual const std::byte* LastFrame() const = 0;
  virtual bool failed() const = 0;
  virtual std::string error() const = 0;
  virtual FrameSourceStats stats() const = 0;
  // How many frames released last stay valid (memory: all of them; a ring
  // keeps `keep` and reuses the rest): the sender may keep them
  // retrievable for retransmission.
  virtual uint32_t ReleasedFramesKept() const { return 1; }
};

class DiskFrameRing final : public FrameProvider {
 public:
  // Opens tile `tile_index` of the store and starts reading at frame
  // `first` (< movie.frames). `slots` (>= keep + 2) buffers of
  // frame_stride bytes each; keep + 1 of them are the sender's (in use, and
  // the last `keep` frames released, held for retransmission). `faults`:
  // a test's slow disk (tile_reader.h).
  static Result<std::unique_ptr<DiskFrameRing>> Open(const MovieManifest& movie,
                                                     uint32_t tile_index, uint32_t slots,
                                                     bool direct = true, uint64_t first = 0,
                                                     uint32_t keep = 1,
                                                     const DiskFaults& faults = {});
  ~DiskFrameRing() override;

  const std::byte* Acquire(uint64_t index, int64_t deadline_ns) override;
  void Release() override;
  void SetReadAhead(int32_t step) override;
  void SetPlayClock(uint64_t frame, int64_t due_ns, int64_t interval_ns) override;
  bool Skipped(uint64_t index) const override;
  const std::byte* LastFrame() const override;
  bool failed() const override { return failed_.load(); }
  std::string error() const override;
  FrameSourceStats stats() const override;
  bool direct() const { return reader_.direct(); }
  uint32_t ReleasedFramesKept() const override { return keep_; }

 private:
  enum class SlotState : uint8_t { kFree, kFilling, kReady, kInUse, kHeld };
  struct Slot {
    AlignedBuffer buffer;
    uint64_t frame = 0;
    uint64_t sequence = 0;  // order of reading, to find the oldest
    uint64_t generation = 0;
    SlotState state = SlotState::kFree;
  };

  DiskFrameRing(TileReader reader, uint64_t frames) : reader_(std::move(reader)), frames_(frames) {}
  void ReadLoop();
  int64_t StepsFrom(uint64_t from, uint64_t to) const;
  uint64_t OnTime(uint64_t frame, int64_t now);
  bool InSkip(uint64_t index) const;

  TileReader reader_;
  const uint64_t frames_;
  std::vector<Slot> slots_;
  std::thread thread_;
  mutable std::mutex mu_;
  std::condition_variable reader_cv_, sender_cv_;
  bool stop_ = false;
  uint64_t next_frame_ = 0;  // what the reader reads next
  int32_t step_ = 1;         // then next_frame_ + step_, modulo the frames
  uint64_t generation_ = 0;  // bumped by a restart; in-flight reads of an older one are dropped
  uint64_t sequence_ = 0;
  // The play clock (SetPlayClock), the reads' mean time, the frames skipped.
  uint64_t clock_frame_ = 0;
  int64_t clock_due_ns_ = 0, interval_ns_ = 0, read_mean_ns_ = 0;
  uint64_t skip_from_ = 0, skip_to_ = 0;  // [from, to) in play order; empty if equal
  int in_use_ = -1;
  uint32_t keep_ = 1;
  std::deque<int> held_;  // the last frames released, oldest first
  std::atomic<bool> failed_{false};
  std::string error_;
  FrameSourceStats stats_;
};

class MemoryFrames final : public FrameProvider {
 public:
  // `frames` buffers of at least the tile's frame size; frame i is
  // frames[i % frames.size()].
  explicit MemoryFrames(std::vector<std::vector<std::byte>> frames) : frames_(std::move(frames)) {}
  const std::byte* Acquire(uint64_t index, int64_t) override {
    return frames_[index % frames_.size()].data();
  }
  void Release() override {}
  uint32_t ReleasedFramesKept() const override { return UINT32_MAX; }
  const std::byte* LastFrame() const override { return nullptr; }
  bool failed() const override { return false; }
  std::string error() const override { return ""; }
  FrameSourceStats stats() const override { return {}; }

 private:
  std::vector<std::vector<std::byte>> frames_;
};

}  // namespace tilestream
