#include "common/live/live_tile_frames.h"

#include <cstring>
#include <utility>

namespace tilestream {

std::string LiveMovieDir(const LiveMovie& m) { return "live:" + m.name + ":" + m.ring_path; }

std::optional<LiveMovie> ParseLiveMovieDir(std::string_view dir) {
  if (!dir.starts_with("live:")) return std::nullopt;
  dir.remove_prefix(5);
  const size_t colon = dir.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  return LiveMovie{std::string(dir.substr(0, colon)), std::string(dir.substr(colon + 1))};
}

Result<std::unique_ptr<LiveTileFrames>> LiveTileFrames::Open(const std::string& ring_path,
                                                             const WallSettings& wall,
                                                             uint32_t tile, Fit fit,
                                                             uint32_t keep) {
  auto ring = PictureRing::Open(ring_path);
  if (!ring.ok()) return ring.status();
  std::vector<AlignedBuffer> buffers;
  for (uint32_t i = 0; i <= keep; ++i) {
    auto b = AlignedBuffer::Allocate(wall.tile.frame_bytes());
    if (!b.ok()) return b.status();
    std::memset(b->data(), 0, b->size());  // black until the first picture
    buffers.push_back(std::move(b).value());
  }
  return std::unique_ptr<LiveTileFrames>(
      new LiveTileFrames(std::move(ring).value(), wall, tile, fit, keep, std::move(buffers)));
}

LiveTileFrames::LiveTileFrames(PictureRing ring, const WallSettings& wall, uint32_t tile, Fit fit,
                               uint32_t keep, std::vector<AlignedBuffer> buffers)
    : ring_(std::move(ring)),
      canvas_width_(wall.source_width()),
      canvas_height_(wall.source_height()),
      fit_(fit),
      keep_(keep),
      buffers_(std::move(buffers)) {
  const PixelOrigin origin = TileOrigin(wall, tile);
  region_ = {origin.x, origin.y, wall.tile.width, wall.tile.height};
}

const std::byte* LiveTileFrames::Acquire(uint64_t index, int64_t /*deadline_ns*/) {
  if (index == last_number_) return buffers_[last_].data();
  const std::optional<RingPicture> p = ring_.Find(index);
  const size_t next = (last_ + 1) % buffers_.size();
  if (!p || !Draw(*p, next)) {
    ++live_.stale;
    return buffers_[last_].data();
  }
  last_ = next;
  last_number_ = index;
  ++live_.pictures;
  ++stats_.frames_read;
  stats_.bytes_read += buffers_[next].size();
  return buffers_[next].data();
}

bool LiveTileFrames::Draw(const RingPicture& p, size_t into) {
  if (p.width != planned_width_ || p.height != planned_height_) {
    if (scaler_) ++live_.replanned;
    scaler_.emplace(p.width, p.height, canvas_width_, canvas_height_, region_, fit_);
    planned_width_ = p.width;
    planned_height_ = p.height;
  }
  scaler_->Scale(p.pixels, buffers_[into].data());
  return ring_.Intact(p);
}

FrameSourceStats LiveTileFrames::stats() const { return stats_; }

}  // namespace tilestream
