// A buffer of zero bytes whose pages the kernel zeroes when they are first
// written (calloc: a large block is fresh anonymous memory, never
// memset). The wall's simulation, which fills no frame buffer at the
// reference wall's scale, spent half its time zeroing them; a receiver
// writes its own through at start (AssemblerOptions::prefault) so that its
// first frames take no page faults.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <span>

namespace tilestream {

class ZeroedBuffer {
 public:
  ZeroedBuffer() = default;
  explicit ZeroedBuffer(size_t size)
      : data_(static_cast<std::byte*>(std::calloc(size == 0 ? 1 : size, 1))), size_(size) {
    if (!data_) throw std::bad_alloc();
  }
  std::byte* data() { return data_.get(); }
  const std::byte* data() const { return data_.get(); }
  size_t size() const { return size_; }
  std::span<std::byte> span() { return {data_.get(), size_}; }

 private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::unique_ptr<std::byte, Free> data_;
  size_t size_ = 0;
};

}  // namespace tilestream
