// What `movies` says of a movie library (docs/control.md): per movie its
// name, title, layout and tile size, frames, fps, duration, bytes on this
// server, and whether it fits the wall (and if not, why).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "common/control/control_commands.h"
#include "common/control/library_presence.h"
#include "common/store/movie_library.h"
#include "common/wall/wall_config.h"

namespace tilestream {

// {"library":PATH,"truncated":bool,"movies":[{"name":...,"fits":...},...]}
nlohmann::json MovieListing(const std::string& path, const Library& library);

// The reply to `movies` from `list` (unset: there is no library), as JSON
// text: the listing with "ok":true, or the error.
std::string MoviesReply(const ControlCommands::MovieList& list);

// Whether a tile's file is on this host: on a wall over several servers,
// the tiles its server streams; else every tile.
std::function<bool(uint32_t tile)> TilesOnThisHost(const WallConfig& c);

// What `movies` answers on this host for config `c`'s library.path:
// scanned anew each time (a movie copied in shows at once), the tile files
// checked only for the tiles this host's server streams; with `presence`
// (which outlives the lister) a movie missing on another server does not
// fit. REQUIRES: c.library_path is not empty.
ControlCommands::MovieList LibraryLister(const WallConfig& c,
                                         const LibraryPresence* presence = nullptr);

}  // namespace tilestream
