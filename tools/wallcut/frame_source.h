// Where wallcut's whole-wall frames come from: the synthetic cosmic web,
// raw rgb24 on a file descriptor (ffmpeg -f rawvideo -pix_fmt rgb24 -), or
// PPM files. Each source checks its frames against the wall's source size.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/base/result.h"
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
// One PPM file per frame, in the order given.
std::unique_ptr<FrameSource> MakePpmSource(std::vector<std::string> paths,
                                           const WallSettings& wall);

}  // namespace tilestream
