#include "tools/wallcut/frame_source.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/image/ppm.h"
#include "common/image/ycbcr.h"
#include "tools/wallcut/wall_cutter.h"

namespace tilestream {
namespace {

std::string WallSize(const WallSettings& w) {
  return fmt::format("{}x{} ({} tiles of {}x{}, bezels {}x{})", w.source_width(), w.source_height(),
                     w.layout.ToString(), w.tile.width, w.tile.height, w.bezel_x, w.bezel_y);
}

class SyntheticSource final : public FrameSource {
 public:
  SyntheticSource(CosmicWeb web, const WallSettings& wall, uint64_t frames, bool stamp)
      : web_(std::move(web)), wall_(wall), frames_(frames), stamp_(stamp) {}

  Result<bool> Next(std::span<std::byte> frame) override {
    if (next_ >= frames_) return false;
    web_.Render(next_, frame);
    if (stamp_) {
      const uint32_t scale = std::max(1u, wall_.tile.height / 100);
      for (uint32_t t = 0; t < wall_.layout.tile_count(); ++t) {
        const PixelOrigin o = TileOrigin(wall_, t);
        DrawNumber(frame, wall_.source_width(), wall_.source_height(), o.x + 2 * scale,
                   o.y + 2 * scale, next_, scale);
      }
    }
    ++next_;
    return true;
  }
  uint64_t expected_frames() const override { return frames_; }

 private:
  CosmicWeb web_;
  WallSettings wall_;
  uint64_t frames_, next_ = 0;
  bool stamp_;
};

// Reads one frame of `frame.size()` bytes: false at the end, an error for
// a short one (`what` says what a frame must be).
Result<bool> ReadFrame(int fd, const std::string& name, uint64_t index, std::span<std::byte> frame,
                       const std::string& what) {
  size_t got = 0;
  while (got < frame.size()) {
    const ssize_t n = read(fd, frame.data() + got, frame.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IoError(fmt::format("{}: frame {}", name, index), errno);
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got == 0) return false;
  if (got < frame.size())
    return Status::InvalidArgument(
        fmt::format("{}: frame {} is short: {} of {} bytes. Frames must be {}", name, index, got,
                    frame.size(), what));
  return true;
}

class RawSource final : public FrameSource {
 public:
  RawSource(int fd, std::string name, const WallSettings& wall)
      : fd_(fd), name_(std::move(name)), wall_(wall) {}

  Result<bool> Next(std::span<std::byte> frame) override {
    const size_t want = size_t{wall_.source_width()} * wall_.source_height() * 3;
    auto r = ReadFrame(fd_, name_, frames_, frame.first(want),
                       "raw rgb24 of the whole wall, " + WallSize(wall_));
    if (r.ok() && *r) ++frames_;
    return r;
  }
  uint64_t expected_frames() const override { return 0; }

 private:
  int fd_;
  std::string name_;
  WallSettings wall_;
  uint64_t frames_ = 0;
};

class ScaledRawSource final : public FrameSource {
 public:
  ScaledRawSource(int fd, std::string name, const WallSettings& wall, RawFormat f)
      : fd_(fd),
        name_(std::move(name)),
        format_(f),
        what_(fmt::format("raw {} of {}x{}", f.uyvy422 ? "uyvy422" : "rgb24", f.width, f.height)),
        input_(size_t{f.width} * f.height * (f.uyvy422 ? 2 : 3)),
        picture_(f.uyvy422 ? size_t{f.width} * f.height * 3 : 0),
        scaler_(f.width, f.height, wall.source_width(), wall.source_height(),
                {0, 0, wall.source_width(), wall.source_height()}, f.fit) {}

  Result<bool> Next(std::span<std::byte> frame) override {
    auto r = ReadFrame(fd_, name_, frames_, input_, what_);
    if (!r.ok() || !*r) return r;
    ++frames_;
    if (format_.uyvy422) {
      const size_t line = YCbCr422LineBytes(format_.width, 8);
      for (uint32_t y = 0; y < format_.height; ++y)
        YCbCr422LineToRgb(input_.data() + y * line, format_.width, {},
                          picture_.data() + size_t{y} * format_.width * 3);
    }
    scaler_.Scale(format_.uyvy422 ? picture_.data() : input_.data(), frame.data());
    return true;
  }
  uint64_t expected_frames() const override { return 0; }

 private:
  int fd_;
  std::string name_;
  RawFormat format_;
  std::string what_;
  std::vector<std::byte> input_, picture_;
  RegionScaler scaler_;
  uint64_t frames_ = 0;
};

class PpmSource final : public FrameSource {
 public:
  PpmSource(std::vector<std::string> paths, const WallSettings& wall)
      : paths_(std::move(paths)), wall_(wall) {}

  Result<bool> Next(std::span<std::byte> frame) override {
    if (next_ >= paths_.size()) return false;
    const std::string& path = paths_[next_++];
    auto image = ReadPpm(path);
    if (!image.ok()) return image.status();
    if (image->width != wall_.source_width() || image->height != wall_.source_height()) {
      return Status::InvalidArgument(fmt::format("{}: the image is {}x{}, the wall needs {}", path,
                                                 image->width, image->height, WallSize(wall_)));
    }
    std::memcpy(frame.data(), image->rgb.data(), image->rgb.size());
    return true;
  }
  uint64_t expected_frames() const override { return paths_.size(); }

 private:
  std::vector<std::string> paths_;
  WallSettings wall_;
  size_t next_ = 0;
};

}  // namespace

Result<std::unique_ptr<FrameSource>> MakeSyntheticSource(const WallSettings& wall, uint64_t frames,
                                                         uint64_t seed, bool stamp) {
  CosmicWebOptions o;
  o.width = wall.source_width();
  o.height = wall.source_height();
  o.frames = frames;
  o.seed = seed;
  auto web = CosmicWeb::Create(o);
  if (!web.ok()) return web.status();
  return std::unique_ptr<FrameSource>(
      new SyntheticSource(std::move(web).value(), wall, frames, stamp));
}

std::unique_ptr<FrameSource> MakeRawSource(int fd, std::string name, const WallSettings& wall) {
  return std::make_unique<RawSource>(fd, std::move(name), wall);
}

std::unique_ptr<FrameSource> MakeScaledRawSource(int fd, std::string name, const WallSettings& wall,
                                                 RawFormat format) {
  return std::make_unique<ScaledRawSource>(fd, std::move(name), wall, format);
}

std::unique_ptr<FrameSource> MakePpmSource(std::vector<std::string> paths,
                                           const WallSettings& wall) {
  return std::make_unique<PpmSource>(std::move(paths), wall);
}

}  // namespace tilestream
