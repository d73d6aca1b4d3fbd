#include "common/live/picture_ring.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <utility>

#include "common/base/unique_fd.h"

namespace tilestream {

namespace {

constexpr char kMagic[8] = {'t', 's', 'r', 'i', 'n', 'g', '1', '\0'};
constexpr size_t kPage = 4096;

uint64_t Load(const uint64_t& v, std::memory_order order) {
  return std::atomic_ref<uint64_t>(const_cast<uint64_t&>(v)).load(order);
}
void Store(uint64_t& v, uint64_t x, std::memory_order order) {
  std::atomic_ref<uint64_t>(v).store(x, order);
}

}  // namespace

// The first page: the ring's shape, the newest picture, and every slot's
// sequence and picture. Fields a reader loads while the writer may store
// them are 64-bit and accessed atomically.
struct PictureRing::Header {
  char magic[8];
  uint64_t slots;
  uint64_t max_width;
  uint64_t max_height;
  uint64_t slot_bytes;
  uint64_t newest;
};
struct PictureRing::Slot {
  uint64_t sequence;  // 2N - 1 while picture N is written, 2N once whole
  uint64_t size;      // width << 32 | height
  uint64_t complete_ns;
  uint64_t rtp_timestamp;
};
static_assert(sizeof(uint64_t) * 6 + sizeof(uint64_t) * 4 * PictureRing::kSlots <= kPage);

namespace {

size_t SlotBytes(uint32_t w, uint32_t h) {
  const size_t b = size_t{w} * h * 3;
  return (b + kPage - 1) / kPage * kPage;
}

}  // namespace

PictureRing::PictureRing(std::string path, void* map, size_t bytes, bool owner)
    : path_(std::move(path)), map_(map), bytes_(bytes), owner_(owner) {}

PictureRing::PictureRing(PictureRing&& other) noexcept
    : path_(std::move(other.path_)),
      map_(std::exchange(other.map_, nullptr)),
      bytes_(other.bytes_),
      owner_(std::exchange(other.owner_, false)),
      writing_(other.writing_) {}

PictureRing& PictureRing::operator=(PictureRing&& other) noexcept {
  if (this != &other) {
    Release();
    path_ = std::move(other.path_);
    map_ = std::exchange(other.map_, nullptr);
    bytes_ = other.bytes_;
    owner_ = std::exchange(other.owner_, false);
    writing_ = other.writing_;
  }
  return *this;
}

PictureRing::~PictureRing() { Release(); }

void PictureRing::Release() {
  if (map_) munmap(map_, bytes_);
  if (owner_) unlink(path_.c_str());
  map_ = nullptr;
  owner_ = false;
}

Result<PictureRing> PictureRing::Create(const std::string& path, uint32_t max_width,
                                        uint32_t max_height) {
  if (max_width == 0 || max_height == 0 || max_width > kMaxPictureWidth ||
      max_height > kMaxPictureHeight)
    return Status::InvalidArgument(fmt::format("a picture ring of {}x{}: outside 1x1..{}x{}",
                                               max_width, max_height, kMaxPictureWidth,
                                               kMaxPictureHeight));
  unlink(path.c_str());  // a dead job's
  UniqueFd fd(open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!fd.valid())
    return Status::IoError(fmt::format("{}: cannot create: {}", path, std::strerror(errno)));
  const size_t slot_bytes = SlotBytes(max_width, max_height);
  const size_t bytes = kPage + kSlots * slot_bytes;
  if (ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0) {
    const int e = errno;
    unlink(path.c_str());
    return Status::IoError(
        fmt::format("{}: cannot size to {} bytes: {}", path, bytes, std::strerror(e)));
  }
  void* map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (map == MAP_FAILED) {
    const int e = errno;
    unlink(path.c_str());
    return Status::IoError(fmt::format("{}: cannot map: {}", path, std::strerror(e)));
  }
  auto* h = static_cast<Header*>(map);
  h->slots = kSlots;
  h->max_width = max_width;
  h->max_height = max_height;
  h->slot_bytes = slot_bytes;
  std::atomic_thread_fence(std::memory_order_release);
  std::memcpy(h->magic, kMagic, sizeof kMagic);
  return PictureRing(path, map, bytes, /*owner=*/true);
}

Result<PictureRing> PictureRing::Open(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid())
    return Status::NotFound(
        fmt::format("{}: no live picture ring: {}", path, std::strerror(errno)));
  struct stat st {};
  if (fstat(fd.get(), &st) != 0 || static_cast<size_t>(st.st_size) < kPage)
    return Status::InvalidArgument(fmt::format("{}: not a picture ring (too short)", path));
  const auto bytes = static_cast<size_t>(st.st_size);
  void* map = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd.get(), 0);
  if (map == MAP_FAILED)
    return Status::IoError(fmt::format("{}: cannot map: {}", path, std::strerror(errno)));
  PictureRing ring(path, map, bytes, /*owner=*/false);
  const auto* h = static_cast<const Header*>(map);
  if (std::memcmp(h->magic, kMagic, sizeof kMagic) != 0 || h->slots != kSlots ||
      h->max_width == 0 || h->max_width > kMaxPictureWidth || h->max_height == 0 ||
      h->max_height > kMaxPictureHeight ||
      h->slot_bytes !=
          SlotBytes(static_cast<uint32_t>(h->max_width), static_cast<uint32_t>(h->max_height)) ||
      bytes < kPage + kSlots * h->slot_bytes)
    return Status::InvalidArgument(fmt::format("{}: not a picture ring of this version", path));
  return ring;
}

PictureRing::Slot& PictureRing::slot(uint64_t number) const {
  auto* slots = reinterpret_cast<Slot*>(static_cast<std::byte*>(map_) + sizeof(Header));
  return slots[number % kSlots];
}

std::byte* PictureRing::pixels(uint64_t number) const {
  const auto* h = static_cast<const Header*>(map_);
  return static_cast<std::byte*>(map_) + kPage + (number % kSlots) * h->slot_bytes;
}

uint32_t PictureRing::max_width() const {
  return static_cast<uint32_t>(static_cast<const Header*>(map_)->max_width);
}
uint32_t PictureRing::max_height() const {
  return static_cast<uint32_t>(static_cast<const Header*>(map_)->max_height);
}

std::byte* PictureRing::BeginPicture(uint32_t width, uint32_t height) {
  const uint64_t n = Load(static_cast<Header*>(map_)->newest, std::memory_order_relaxed) + 1;
  writing_ = n;
  Slot& s = slot(n);
  Store(s.sequence, 2 * n - 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);  // torn before any byte changes
  Store(s.size, uint64_t{width} << 32 | height, std::memory_order_relaxed);
  return pixels(n);
}

uint64_t PictureRing::Publish(int64_t complete_ns, uint32_t rtp_timestamp) {
  const uint64_t n = writing_;
  Slot& s = slot(n);
  Store(s.complete_ns, static_cast<uint64_t>(complete_ns), std::memory_order_relaxed);
  Store(s.rtp_timestamp, rtp_timestamp, std::memory_order_relaxed);
  Store(s.sequence, 2 * n, std::memory_order_release);
  Store(static_cast<Header*>(map_)->newest, n, std::memory_order_release);
  return n;
}

uint64_t PictureRing::newest() const {
  return Load(static_cast<const Header*>(map_)->newest, std::memory_order_acquire);
}

std::optional<RingPicture> PictureRing::Find(uint64_t number) const {
  if (number == 0) return std::nullopt;
  const Slot& s = slot(number);
  if (Load(s.sequence, std::memory_order_acquire) != 2 * number) return std::nullopt;
  RingPicture p;
  p.number = number;
  const uint64_t size = Load(s.size, std::memory_order_relaxed);
  p.width = static_cast<uint32_t>(size >> 32);
  p.height = static_cast<uint32_t>(size);
  p.complete_ns = static_cast<int64_t>(Load(s.complete_ns, std::memory_order_relaxed));
  p.rtp_timestamp = static_cast<uint32_t>(Load(s.rtp_timestamp, std::memory_order_relaxed));
  p.pixels = pixels(number);
  // What was loaded is the picture's only if the slot still holds it.
  if (!Intact(p) || p.width == 0 || p.height == 0 || p.width > max_width() ||
      p.height > max_height())
    return std::nullopt;
  return p;
}

bool PictureRing::Intact(const RingPicture& p) const {
  std::atomic_thread_fence(std::memory_order_acquire);  // the reads above come first
  return Load(slot(p.number).sequence, std::memory_order_relaxed) == 2 * p.number;
}

}  // namespace tilestream
