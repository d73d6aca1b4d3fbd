#include "tools/wallcut/frame_source.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/image/ppm.h"
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

class RawSource final : public FrameSource {
 public:
  RawSource(int fd, std::string name, const WallSettings& wall)
      : fd_(fd), name_(std::move(name)), wall_(wall) {}

  Result<bool> Next(std::span<std::byte> frame) override {
    const size_t want = size_t{wall_.source_width()} * wall_.source_height() * 3;
    size_t got = 0;
    while (got < want) {
      const ssize_t n = read(fd_, frame.data() + got, want - got);
      if (n < 0) {
        if (errno == EINTR) continue;
        return Status::IoError(fmt::format("{}: frame {}", name_, frames_), errno);
      }
      if (n == 0) break;
      got += static_cast<size_t>(n);
    }
    if (got == 0) return false;
    if (got < want) {
      return Status::InvalidArgument(fmt::format(
          "{}: frame {} is short: {} of {} bytes. Frames must be raw rgb24 of the whole wall, {}",
          name_, frames_, got, want, WallSize(wall_)));
    }
    ++frames_;
    return true;
  }
  uint64_t expected_frames() const override { return 0; }

 private:
  int fd_;
  std::string name_;
  WallSettings wall_;
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

std::unique_ptr<FrameSource> MakePpmSource(std::vector<std::string> paths,
                                           const WallSettings& wall) {
  return std::make_unique<PpmSource>(std::move(paths), wall);
}

}  // namespace tilestream
