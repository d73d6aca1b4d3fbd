#include "common/store/tile_reader.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>

namespace tilestream {

Result<TileReader> TileReader::Open(const MovieManifest& m, uint32_t tile_index, bool direct,
                                    const DiskFaults& faults) {
  TileReader r;
  r.path_ = m.TilePath(tile_index);
  r.frames_ = m.frames;
  r.stride_ = m.frame_stride;
  r.direct_ = direct;
  r.read_ns_ = faults.read_ns;
  if (direct && faults.refuse_direct) {
    errno = EINVAL;
  } else {
    r.fd_.reset(open(r.path_.c_str(), O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0)));
  }
  if (!r.fd_.valid() && direct && errno == EINVAL) TS_RETURN_IF_ERROR(r.FallBackToBuffered());
  if (!r.fd_.valid()) return Status::IoError(r.path_, errno);
  struct stat st;
  if (fstat(r.fd_.get(), &st) != 0) return Status::IoError(r.path_, errno);
  if (static_cast<uint64_t>(st.st_size) != r.frames_ * r.stride_) {
    return Status::InvalidArgument(fmt::format(
        "{} has {} bytes, expected {} ({} frames x {} bytes): truncated or not this movie's file",
        r.path_, st.st_size, r.frames_ * r.stride_, r.frames_, r.stride_));
  }
  return r;
}

Status TileReader::FallBackToBuffered() {
  static std::once_flag warned;
  std::call_once(warned, [&] {
    spdlog::warn(
        "{}: the file system refuses O_DIRECT; reading through the page cache "
        "(slower, and it evicts other data)",
        path_);
  });
  direct_ = false;
  fd_.reset(open(path_.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd_.valid()) return Status::IoError(path_, errno);
  return Status::Ok();
}

Status TileReader::ReadFrame(uint64_t index, std::span<std::byte> dest) {
  if (read_ns_ > 0) WaitAsASlowDisk();
  const off_t base = static_cast<off_t>(index * stride_);
  size_t done = 0;
  while (done < stride_) {
    const ssize_t n =
        pread(fd_.get(), dest.data() + done, stride_ - done, base + static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EINVAL && direct_) {
        TS_RETURN_IF_ERROR(FallBackToBuffered());
        continue;
      }
      return Status::IoError(fmt::format("{}: frame {}", path_, index), errno);
    }
    if (n == 0)
      return Status::IoError(
          fmt::format("{}: frame {} ends after {} of {} bytes: the file was truncated", path_,
                      index, done, stride_));
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

void TileReader::WaitAsASlowDisk() const {
  const timespec delay{static_cast<time_t>(read_ns_ / 1'000'000'000),
                       static_cast<long>(read_ns_ % 1'000'000'000)};
  nanosleep(&delay, nullptr);
}

}  // namespace tilestream
