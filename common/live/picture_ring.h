// A live source's pictures, shared between the thread that receives the
// source and the tile ranks that cut their regions from it (issue 44;
// docs/live.md): a ring of slots in a file under /dev/shm, mapped by each
// process, each slot one RGB24 picture of at most the ring's pixels, so a
// picture is received and converted once and never copied whole again.
//
// One writer publishes pictures numbered 1, 2, 3, ... in turn into slot
// number % slots, under a sequence lock per slot: the slot's sequence is
// odd while a picture is written and even once it is whole. Readers never
// block the writer: a reader takes picture N while its slot still holds it
// (Find), reads it in place, and asks afterwards whether the writer came
// round to that slot meanwhile (Intact); if it did, what it read is torn
// and thrown away. With 8 slots a picture stays whole for 7 of the
// source's frame intervals after the next is published.
//
// The slots are sized for the largest picture (kMaxPictureWidth x
// kMaxPictureHeight) but tmpfs gives pages only where written: a 1080p
// source uses 6 MB of each. No allocation, no lock, no system call per
// picture; thread- and process-safe as described.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "common/base/result.h"

namespace tilestream {

inline constexpr uint32_t kMaxPictureWidth = 7680;
inline constexpr uint32_t kMaxPictureHeight = 4320;

struct RingPicture {
  uint64_t number = 0;  // 1, 2, ...
  uint32_t width = 0, height = 0;
  int64_t complete_ns = 0;            // CLOCK_MONOTONIC: when the source's frame was whole
  uint32_t rtp_timestamp = 0;         // the source's
  const std::byte* pixels = nullptr;  // width x height RGB24, rows packed
};

class PictureRing {
 public:
  static constexpr uint32_t kSlots = 8;

  // The writer's: creates the ring's file at `path` (one left by a job
  // that died is replaced), and removes it when destroyed.
  static Result<PictureRing> Create(const std::string& path, uint32_t max_width = kMaxPictureWidth,
                                    uint32_t max_height = kMaxPictureHeight);
  // A reader's: maps the ring a writer created.
  static Result<PictureRing> Open(const std::string& path);

  PictureRing(PictureRing&& other) noexcept;
  PictureRing& operator=(PictureRing&& other) noexcept;
  PictureRing(const PictureRing&) = delete;
  PictureRing& operator=(const PictureRing&) = delete;
  ~PictureRing();

  // Writer: the slot of the next picture, of `width` x `height` (within
  // the ring's maximum), to be written and then published. The readers
  // see it torn from here until Publish.
  std::byte* BeginPicture(uint32_t width, uint32_t height);
  // Writer: the picture begun is whole; returns its number.
  uint64_t Publish(int64_t complete_ns, uint32_t rtp_timestamp);

  // The newest picture published (0: none yet).
  uint64_t newest() const;
  // Picture `number` while its slot holds it whole; nullopt once the
  // writer has come round to its slot again (or before it was published).
  std::optional<RingPicture> Find(uint64_t number) const;
  // After reading `p` from its slot: true if the writer did not touch the
  // slot meanwhile (what was read is picture p, whole).
  bool Intact(const RingPicture& p) const;

  uint32_t max_width() const;
  uint32_t max_height() const;
  const std::string& path() const { return path_; }

 private:
  struct Header;
  struct Slot;
  PictureRing(std::string path, void* map, size_t bytes, bool owner);
  Slot& slot(uint64_t number) const;
  std::byte* pixels(uint64_t number) const;
  void Release();

  std::string path_;
  void* map_ = nullptr;
  size_t bytes_ = 0;
  bool owner_ = false;
  uint64_t writing_ = 0;  // writer: the picture begun, not published
};

}  // namespace tilestream
