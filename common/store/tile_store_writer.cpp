#include "common/store/tile_store_writer.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <utility>

namespace tilestream {
namespace fs = std::filesystem;
namespace {

constexpr const char* kPartial = ".partial";

Status WriteAll(int fd, const iovec* iov, int count, const std::string& path) {
  std::vector<iovec> rest(iov, iov + count);
  size_t i = 0;
  while (i < rest.size()) {
    const ssize_t n = writev(fd, rest.data() + i, static_cast<int>(rest.size() - i));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IoError(path, errno);
    }
    size_t left = static_cast<size_t>(n);
    while (i < rest.size() && left >= rest[i].iov_len) left -= rest[i++].iov_len;
    if (i < rest.size()) {
      rest[i].iov_base = static_cast<char*>(rest[i].iov_base) + left;
      rest[i].iov_len -= left;
    }
  }
  return Status::Ok();
}

Status WriteFileDurably(const std::string& path, const std::string& text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError(path, errno);
  iovec iov{const_cast<char*>(text.data()), text.size()};
  Status s = WriteAll(fd, &iov, 1, path);
  if (s.ok() && fsync(fd) != 0) s = Status::IoError(path, errno);
  close(fd);
  return s;
}

}  // namespace

Result<TileStoreWriter> TileStoreWriter::Create(const Options& o) {
  if (o.layout.tile_count() == 0 || o.tile.width == 0 || o.tile.height == 0)
    return Status::InvalidArgument("tile store: empty layout or tile");
  std::error_code ec;
  fs::create_directories(o.directory, ec);
  if (ec) return Status::IoError(fmt::format("{}: {}", o.directory, ec.message()));
  for (const std::string& d : o.spread) {
    fs::create_directories(d, ec);
    if (ec) return Status::IoError(fmt::format("{}: {}", d, ec.message()));
  }
  const fs::path manifest = fs::path(o.directory) / kManifestName;
  if (fs::exists(manifest)) {
    if (!o.overwrite)
      return Status::InvalidArgument(
          fmt::format("{} already holds a movie ({}); choose another directory or overwrite it",
                      o.directory, kManifestName));
    if (unlink(manifest.c_str()) != 0) return Status::IoError(manifest.string(), errno);
  }

  TileStoreWriter w;
  MovieManifest& m = w.manifest_;
  m.directory = o.directory;
  m.title = o.title;
  m.layout = o.layout;
  m.tile = o.tile;
  m.bezel_x = o.bezel_x;
  m.bezel_y = o.bezel_y;
  m.fps = o.fps;
  m.frame_stride = FrameStride(o.tile);
  const uint32_t tiles = o.layout.tile_count();
  w.frames_.assign(tiles, 0);
  w.fds_.resize(tiles);
  for (uint32_t t = 0; t < tiles; ++t) {
    const std::string name = TileFileName(TileId::FromIndex(t, o.layout));
    if (o.spread.empty()) {
      m.tile_files.push_back(name);
    } else {
      m.tile_files.push_back(fs::absolute(fs::path(o.spread[t % o.spread.size()]) / name).string());
    }
    if (!o.tiles.empty() && std::find(o.tiles.begin(), o.tiles.end(), t) == o.tiles.end()) continue;
    const std::string partial = m.TilePath(t) + kPartial;
    const int fd = open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      const Status s = Status::IoError(partial, errno);
      w.Abort();
      return s;
    }
    w.fds_[t] = UniqueFd(fd);
  }
  return w;
}

TileStoreWriter::TileStoreWriter(TileStoreWriter&& o) noexcept
    : manifest_(std::move(o.manifest_)),
      fds_(std::move(o.fds_)),
      frames_(std::move(o.frames_)),
      bytes_written_(o.bytes_written_),
      done_(std::exchange(o.done_, true)) {}

TileStoreWriter::~TileStoreWriter() {
  if (!done_) Abort();
}

Status TileStoreWriter::AppendFrame(uint32_t tile_index, std::span<const std::byte> frame) {
  static const std::byte kZeros[kStoreAlignment] = {};
  const size_t pad = manifest_.frame_stride - frame.size();
  iovec iov[2] = {{const_cast<std::byte*>(frame.data()), frame.size()},
                  {const_cast<std::byte*>(kZeros), pad}};
  TS_RETURN_IF_ERROR(WriteAll(fds_[tile_index].get(), iov, pad ? 2 : 1,
                              manifest_.TilePath(tile_index) + kPartial));
  ++frames_[tile_index];
  bytes_written_ += manifest_.frame_stride;
  return Status::Ok();
}

Status TileStoreWriter::Finish() {
  uint32_t first = 0;
  while (first < fds_.size() && !holds(first)) ++first;
  const uint64_t frames = first < frames_.size() ? frames_[first] : 0;
  Status s;
  for (uint32_t t = first; t < frames_.size() && s.ok(); ++t) {
    if (holds(t) && frames_[t] != frames)
      s = Status::Internal(fmt::format("tile {} has {} frames, tile {} {}",
                                       TileId::FromIndex(t, manifest_.layout).Name(), frames_[t],
                                       TileId::FromIndex(first, manifest_.layout).Name(), frames));
  }
  if (s.ok() && frames == 0) s = Status::InvalidArgument("no frames were written");
  for (uint32_t t = 0; t < fds_.size() && s.ok(); ++t) {
    if (holds(t) && fdatasync(fds_[t].get()) != 0)
      s = Status::IoError(manifest_.TilePath(t) + kPartial, errno);
  }
  for (uint32_t t = 0; t < fds_.size() && s.ok(); ++t) {
    if (!holds(t)) continue;
    const std::string path = manifest_.TilePath(t);
    if (rename((path + kPartial).c_str(), path.c_str()) != 0) s = Status::IoError(path, errno);
  }
  if (s.ok()) {
    manifest_.frames = frames;
    const std::string path = (fs::path(manifest_.directory) / kManifestName).string();
    s = WriteFileDurably(path + kPartial, ManifestToToml(manifest_));
    if (s.ok() && rename((path + kPartial).c_str(), path.c_str()) != 0)
      s = Status::IoError(path, errno);
  }
  if (!s.ok()) {
    Abort();
    return s;
  }
  fds_.clear();
  done_ = true;
  return s;
}

void TileStoreWriter::Abort() {
  for (uint32_t t = 0; t < manifest_.tile_files.size(); ++t) {
    if (t >= fds_.size() || !holds(t)) continue;  // not ours (or never opened)
    const std::string path = manifest_.TilePath(t);
    unlink((path + kPartial).c_str());
    if (!done_) unlink(path.c_str());  // renamed before a later step failed
  }
  fds_.clear();
  unlink(((fs::path(manifest_.directory) / kManifestName).string() + kPartial).c_str());
  done_ = true;
}

}  // namespace tilestream
