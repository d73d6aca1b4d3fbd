#include "common/base/aligned_buffer.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

namespace tilestream {
namespace {

// MADV_HUGEPAGE succeeds even where THP is "never"; the sysfs knob says
// whether the advice is taken.
bool TransparentHugePagesUsable() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string s;
  std::getline(f, s);
  return s.find("[always]") != std::string::npos || s.find("[madvise]") != std::string::npos;
}

}  // namespace

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& other) noexcept {
  if (this != &other) {
    if (data_) munmap(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    huge_ = other.huge_;
  }
  return *this;
}

AlignedBuffer::~AlignedBuffer() {
  if (data_) munmap(data_, size_);
}

Result<AlignedBuffer> AlignedBuffer::Allocate(size_t bytes) {
  if (bytes == 0) bytes = 1;
  const size_t size = (bytes + kHugePageSize - 1) / kHugePageSize * kHugePageSize;
  // Map one huge page more than needed and trim to a 2 MiB boundary.
  const size_t mapped = size + kHugePageSize;
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return Status::IoError("mmap of " + std::to_string(mapped) + " bytes", errno);
  // The first 2 MiB boundary in the mapping, by pointer arithmetic (no
  // integer-to-pointer cast), and the unused ends given back.
  auto* const base = static_cast<std::byte*>(p);
  const size_t lead =
      (kHugePageSize - reinterpret_cast<uintptr_t>(base) % kHugePageSize) % kHugePageSize;
  std::byte* const aligned = base + lead;
  if (lead > 0) munmap(base, lead);
  std::byte* const tail = aligned + size;
  if (base + mapped > tail) munmap(tail, static_cast<size_t>(base + mapped - tail));

  AlignedBuffer b;
  b.data_ = aligned;
  b.size_ = size;
  b.huge_ = madvise(b.data_, size, MADV_HUGEPAGE) == 0 && TransparentHugePagesUsable();
  // Touch every page now: the faults then get huge pages (an O_DIRECT read
  // into untouched memory mostly does not) on the NUMA node of the caller,
  // and nothing faults later on the hot path.
  std::memset(b.data_, 0, size);
  return b;
}

}  // namespace tilestream
