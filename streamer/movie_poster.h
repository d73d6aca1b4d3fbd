// A library movie's poster for the panel (GET /api/movies/NAME.png, issue
// 36): its first frame as the wall it was cut for, each tile a thumbnail
// (common/image/thumbnail.h) at its place, bezels dark grey, black where
// this server holds no file of the tile. Reads one frame per tile, with
// buffered reads; needs nothing of the playing wall, so the HTTP workers
// make it. Thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "common/base/result.h"
#include "common/image/ppm.h"

namespace tilestream {

// The poster of movie `name` of library `library`. NotFound for a name
// that is no movie there (or not a plain directory name: no "/", "." or
// "..", at most 255 bytes).
Result<Image> MoviePoster(const std::string& library, std::string_view name);

}  // namespace tilestream
