// One tile's frames of a live source (issue 44; docs/live.md): the tile's
// region of the source's pictures, scaled to the wall's canvas (bezels
// included; bars or fill, common/image/scaler.h) from the picture ring that
// the streamer's receiving thread fills (picture_ring.h).
//
// A tick of a live source names a picture number (the coordinator takes
// the newest when it opens the tick, so that every tile shows the same
// picture). Acquire(number) draws the tile's region of that picture into
// the next of keep + 1 tile buffers (the frame sent, and the `keep` sent
// before it, which stay valid for retransmission); the same number again
// hands out the same buffer. A picture the ring no longer holds, or that
// the writer overwrote while it was read, leaves the tile on the picture
// it showed last (counted: stale); before any picture the tile is black.
//
// The scaler is planned again when a picture's size differs from the last
// one's (a source that changed its size), at that picture: the only
// allocation after Open. The scaling runs on the caller's thread, once per
// picture (not per packet).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/aligned_buffer.h"
#include "common/image/scaler.h"
#include "common/live/picture_ring.h"
#include "common/store/frame_ring.h"
#include "common/wall/wall_config.h"

namespace tilestream {

// A live source's picture numbers are a movie without end: what the
// playback and the loads count it as.
inline constexpr uint64_t kLiveFrames = uint64_t{1} << 40;

// How a load names a live source to the tile ranks: "live:NAME:RING_PATH"
// (a name has no colon, common/base/words.h).
struct LiveMovie {
  std::string name, ring_path;
};
std::string LiveMovieDir(const LiveMovie& m);
// Of a LoadMessage's movie directory; nullopt for a tile store's.
std::optional<LiveMovie> ParseLiveMovieDir(std::string_view dir);

struct LiveTileStats {
  uint64_t pictures = 0;   // drawn into the tile
  uint64_t stale = 0;      // asked for, but gone from the ring or torn: the last one again
  uint64_t replanned = 0;  // the source's size changed
};

class LiveTileFrames final : public FrameProvider {
 public:
  // Tile `tile` of `wall`, from the ring at `ring_path`.
  static Result<std::unique_ptr<LiveTileFrames>> Open(const std::string& ring_path,
                                                      const WallSettings& wall, uint32_t tile,
                                                      Fit fit, uint32_t keep = 1);

  const std::byte* Acquire(uint64_t index, int64_t deadline_ns) override;
  void Release() override {}
  const std::byte* LastFrame() const override { return buffers_[last_].data(); }
  bool failed() const override { return false; }
  std::string error() const override { return {}; }
  FrameSourceStats stats() const override;
  uint32_t ReleasedFramesKept() const override { return keep_; }
  const LiveTileStats& live_stats() const { return live_; }

 private:
  LiveTileFrames(PictureRing ring, const WallSettings& wall, uint32_t tile, Fit fit, uint32_t keep,
                 std::vector<AlignedBuffer> buffers);
  // Draws picture `p` into buffer `into`; false if it was torn meanwhile.
  bool Draw(const RingPicture& p, size_t into);

  PictureRing ring_;
  uint32_t canvas_width_, canvas_height_;
  ScaleRegion region_;
  Fit fit_;
  uint32_t keep_;
  std::vector<AlignedBuffer> buffers_;  // keep + 1
  size_t last_ = 0;                     // the buffer handed out last
  uint64_t last_number_ = 0;            // the picture in it (0: black)
  uint32_t planned_width_ = 0, planned_height_ = 0;
  std::optional<RegionScaler> scaler_;
  LiveTileStats live_;
  FrameSourceStats stats_;
};

}  // namespace tilestream
