#include "common/store/tile_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <utility>

#include "common/wall/toml_reader.h"

namespace tilestream {
namespace fs = std::filesystem;
namespace {

constexpr const char* kFormat = "tilestream-tiles";
constexpr int64_t kVersion = 1;
constexpr const char* kPartial = ".partial";

std::atomic<bool> refuse_direct_for_testing{false};
std::atomic<int64_t> read_delay_for_testing{0};

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

// A TOML basic string.
std::string Quote(std::string_view s) {
  std::string q = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      q += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
      continue;
    }
    q += c;
  }
  return q + '"';
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

size_t FrameStride(const TileGeometry& tile) {
  return (tile.frame_bytes() + kStoreAlignment - 1) / kStoreAlignment * kStoreAlignment;
}

std::string TileFileName(const TileId& id) {
  return fmt::format("tile_r{}_c{}.rgb", id.row, id.column);
}

std::string MovieManifest::TilePath(uint32_t tile_index) const {
  const std::string& f = tile_files[tile_index];
  return f.starts_with('/') ? f : (fs::path(directory) / f).string();
}

std::string ManifestToToml(const MovieManifest& m) {
  std::string s;
  s += "# A tilestream movie: one file per tile, frames padded to frame_stride.\n";
  s += "# See docs/tile_store.md.\n\n[movie]\n";
  s += fmt::format("format = \"{}\"\nversion = {}\n", kFormat, kVersion);
  s += fmt::format("title = {}\n", Quote(m.title));
  s += fmt::format("columns = {}\nrows = {}\n", m.layout.columns, m.layout.rows);
  s += fmt::format("tile_width = {}\ntile_height = {}\n", m.tile.width, m.tile.height);
  s += fmt::format("bezel_x = {}\nbezel_y = {}\n", m.bezel_x, m.bezel_y);
  s += fmt::format("pixel_format = \"rgb24\"\nfps = {}\n", m.fps);
  s += fmt::format("frames = {}\nframe_stride = {}\n", m.frames, m.frame_stride);
  for (uint32_t t = 0; t < m.tile_files.size(); ++t) {
    const TileId id = TileId::FromIndex(t, m.layout);
    s += fmt::format("\n[[tile]]\nrow = {}\ncolumn = {}\nfile = {}\n", id.row, id.column,
                     Quote(m.tile_files[t]));
  }
  return s;
}

Result<MovieManifest> ParseManifest(std::string_view toml_text, const std::string& directory,
                                    const std::string& source) {
  auto parsed = ParseToml(toml_text, source);
  if (!parsed.ok()) return parsed.status();
  const toml::table& root = *parsed;
  MovieManifest m;
  m.directory = directory;
  TomlReader r(source, nullptr);
  r.CheckKeys(root, "", {"movie", "tile"});
  const toml::table* movie = Section(r, root, "movie");
  if (!movie) {
    if (r.errors().empty()) r.Error(&root, "movie", "the [movie] table is missing");
    return Status::InvalidArgument(JoinLines(r.errors()));
  }
  r.CheckKeys(*movie, "movie",
              {"format", "version", "title", "columns", "rows", "tile_width", "tile_height",
               "bezel_x", "bezel_y", "pixel_format", "fps", "frames", "frame_stride"});
  std::string format, pixel_format;
  int64_t version = 0;
  r.String(*movie, "movie", "format", &format);
  r.Int(*movie, "movie", "version", 0, 1 << 20, &version);
  r.String(*movie, "movie", "title", &m.title);
  r.Int(*movie, "movie", "columns", 1, kMaxLayoutSide, &m.layout.columns);
  r.Int(*movie, "movie", "rows", 1, kMaxLayoutSide, &m.layout.rows);
  r.Int(*movie, "movie", "tile_width", 1, kMaxTileDimension, &m.tile.width);
  r.Int(*movie, "movie", "tile_height", 1, kMaxTileDimension, &m.tile.height);
  r.Int(*movie, "movie", "bezel_x", 0, kMaxTileDimension, &m.bezel_x);
  r.Int(*movie, "movie", "bezel_y", 0, kMaxTileDimension, &m.bezel_y);
  r.String(*movie, "movie", "pixel_format", &pixel_format);
  r.Float(*movie, "movie", "fps", 0.001, 1000, &m.fps);
  r.Int(*movie, "movie", "frames", 1, int64_t{1} << 40, &m.frames);
  r.Int(*movie, "movie", "frame_stride", 1, int64_t{1} << 40, &m.frame_stride);
  if (format != kFormat)
    r.Error(movie, "movie.format", fmt::format("'{}' is not '{}'", format, kFormat));
  if (version != kVersion)
    r.Error(movie, "movie.version",
            fmt::format("version {} is not supported (this build reads {})", version, kVersion));
  if (pixel_format != "rgb24")
    r.Error(movie, "movie.pixel_format", fmt::format("'{}' is not rgb24", pixel_format));
  for (const char* key : {"columns", "rows", "tile_width", "tile_height", "frames", "frame_stride"})
    if (!movie->get(key)) r.Error(movie, fmt::format("movie.{}", key), "missing");
  if (!r.errors().empty()) return Status::InvalidArgument(JoinLines(r.errors()));

  if (m.frame_stride < m.tile.frame_bytes() || m.frame_stride % kStoreAlignment != 0) {
    r.Error(movie->get("frame_stride"), "movie.frame_stride",
            fmt::format("{} is not a multiple of {} of at least the frame size {}", m.frame_stride,
                        kStoreAlignment, m.tile.frame_bytes()));
  }
  m.tile_files.assign(m.layout.tile_count(), "");
  TableArray(r, root, "tile", [&](const toml::table& t, const std::string& path) {
    r.CheckKeys(t, path, {"row", "column", "file"});
    TileId id{~0u, ~0u};
    std::string file;
    r.Int(t, path, "row", 0, kMaxLayoutSide, &id.row);
    r.Int(t, path, "column", 0, kMaxLayoutSide, &id.column);
    r.String(t, path, "file", &file);
    if (id.row >= m.layout.rows || id.column >= m.layout.columns) {
      return r.Error(&t, path,
                     fmt::format("row/column outside the {} layout", m.layout.ToString()));
    }
    if (file.empty()) return r.Error(&t, path + ".file", "missing");
    std::string& slot = m.tile_files[id.Index(m.layout)];
    if (!slot.empty()) return r.Error(&t, path, fmt::format("tile {} is listed twice", id.Name()));
    slot = file;
  });
  for (uint32_t t = 0; t < m.tile_files.size() && r.errors().empty(); ++t) {
    if (m.tile_files[t].empty())
      r.Error(&root, "tile",
              fmt::format("no [[tile]] entry for {}", TileId::FromIndex(t, m.layout).Name()));
  }
  if (!r.errors().empty()) return Status::InvalidArgument(JoinLines(r.errors()));
  return m;
}

Result<MovieManifest> OpenTileStore(const std::string& directory, bool check_files) {
  const std::string path = (fs::path(directory) / kManifestName).string();
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::NotFound(fmt::format("{}: no tile store here ({}); make one with wallcut",
                                        directory, std::strerror(errno)));
  }
  std::stringstream text;
  text << in.rdbuf();
  auto m = ParseManifest(text.str(), directory, path);
  if (!m.ok() || !check_files) return m;
  const uint64_t expected = m->frames * m->frame_stride;
  for (uint32_t t = 0; t < m->tile_files.size(); ++t) {
    const std::string tile_path = m->TilePath(t);
    struct stat st;
    if (stat(tile_path.c_str(), &st) != 0)
      return Status::IoError(
          fmt::format("{}: tile {}", path, TileId::FromIndex(t, m->layout).Name()) + ": " +
              tile_path,
          errno);
    if (static_cast<uint64_t>(st.st_size) != expected) {
      return Status::InvalidArgument(fmt::format(
          "{}: tile {}: {} has {} bytes, expected {} ({} frames x {} bytes): truncated or not this "
          "movie's file",
          path, TileId::FromIndex(t, m->layout).Name(), tile_path, st.st_size, expected, m->frames,
          m->frame_stride));
    }
  }
  return m;
}

Status CheckManifestMatchesWall(const MovieManifest& m, const WallSettings& wall) {
  if (m.layout != wall.layout || m.tile != wall.tile) {
    return Status::InvalidArgument(
        fmt::format("{}/{}: the movie is {} tiles of {}x{}, but the wall is {} tiles of {}x{}",
                    m.directory, kManifestName, m.layout.ToString(), m.tile.width, m.tile.height,
                    wall.layout.ToString(), wall.tile.width, wall.tile.height));
  }
  return Status::Ok();
}

// --- writer -----------------------------------------------------------------

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

// --- reader -----------------------------------------------------------------

void SimulateODirectRefusalForTesting(bool refuse) { refuse_direct_for_testing = refuse; }
void SimulateSlowDiskForTesting(int64_t ns) { read_delay_for_testing = ns; }

Result<TileReader> TileReader::Open(const MovieManifest& m, uint32_t tile_index, bool direct) {
  TileReader r;
  r.path_ = m.TilePath(tile_index);
  r.frames_ = m.frames;
  r.stride_ = m.frame_stride;
  r.direct_ = direct;
  if (direct && refuse_direct_for_testing.load()) {
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
  if (const int64_t ns = read_delay_for_testing.load(); ns > 0) {
    const timespec delay{static_cast<time_t>(ns / 1'000'000'000),
                         static_cast<long>(ns % 1'000'000'000)};
    nanosleep(&delay, nullptr);
  }
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

}  // namespace tilestream
