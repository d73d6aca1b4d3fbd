// Where wallcut's whole-wall frames come from: the synthetic cosmic web,
// raw rgb24 on a file descriptor (ffmpeg -f rawvideo -pix_fmt rgb24 -),
// raw frames of any size scaled onto the wall, or PPM files. Each source
// checks its frames against the size it expects.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "common/image/scaler.h"
#include "common/wall/wall_config.h"
#include "tools/wallcut/cosmic_web.h"

namespace tilestream {

class FrameSource {
 public:
  virtual ~FrameSource() = default;
  // Fills `frame` (source_width * source_height * 3 bytes) with the next
  // frame. Returns false at the end; an error for bad input.
  virtual Result<bool> Next(std::span<std::byte> frame) = 0;
  // Frames to expect, 0 if unknown.
  virtual uint64_t expected_frames() const = 0;
};

// The cosmic web at the wall's source size; with `stamp`, each tile shows
// the frame number in its top-left corner (a sync check on a real wall).
Result<std::unique_ptr<FrameSource>> MakeSyntheticSource(const WallSettings& wall, uint64_t frames,
                                                         uint64_t seed, bool stamp);
// Raw rgb24 frames read from `fd` until end of file. `name` is used in
// messages. A partial last frame is an error.
std::unique_ptr<FrameSource> MakeRawSource(int fd, std::string name, const WallSettings& wall);
// Raw frames of another size or pixel format read from `fd`: each
// converted to RGB (uyvy422: YCbCr 4:2:2, BT.709, common/image/ycbcr.h)
// and scaled onto the wall's canvas, bezels included, its aspect kept
// with bars or filling it (common/image/scaler.h), as a live source is.
struct RawFormat {
  uint32_t width = 0, height = 0;
  bool uyvy422 = false;  // else rgb24
  Fit fit = Fit::kBars;
};
std::unique_ptr<FrameSource> MakeScaledRawSource(int fd, std::string name, const WallSettings& wall,
                                                 RawFormat format);
// One PPM file per frame, in the order given.
std::unique_ptr<FrameSource> MakePpmSource(std::vector<std::string> paths,
                                           const WallSettings& wall);

}  // namespace tilestream
