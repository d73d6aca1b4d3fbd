// Which pixels of a frame have been written: one bit per pixel group.
//
// A frame is complete when every pixel is covered, not when the pixel bytes
// received add up to the frame's size: a sender that repeats a region under
// fresh sequence numbers (broken or hostile) would otherwise "complete" a
// frame with a region never written. Found by fuzz_assembler.
//
// Memory: width*height/8 bytes, allocated at construction. Mark() and
// Clear() never allocate. Not thread-safe (the network thread's alone).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tilestream {

class CoverageMap {
 public:
  explicit CoverageMap(size_t pixels) : pixels_(pixels), words_((pixels + 63) / 64, 0) {}

  // Marks pixels [first, first + count) covered; returns how many of them
  // were not covered before.
  // REQUIRES: first + count <= pixels.
  size_t Mark(size_t first, size_t count);

  // Uncovers every pixel below `end` (pixels at or beyond it must be
  // uncovered already): clearing costs what the frame reached, not its size.
  void Clear(size_t end);

  size_t covered() const { return covered_; }
  bool full() const { return covered_ == pixels_; }

 private:
  size_t pixels_;
  size_t covered_ = 0;
  std::vector<uint64_t> words_;
};

}  // namespace tilestream
