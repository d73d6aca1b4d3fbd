// The control channel's commands (docs/control.md): one line each, parsed
// from untrusted text into a Command. No allocation beyond the error text
// and a movie's name; never throws. The replies are JSON lines built by the server.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "common/base/result.h"
#include "common/base/words.h"

namespace tilestream {

enum class CommandKind : uint8_t {
  kPlay = 0,
  kPause = 1,
  kToggle = 2,
  kSeek = 3,   // frame = N
  kStep = 4,   // count = +-N
  kSpeed = 5,  // value = X (negative plays backwards)
  kLoop = 6,   // on
  kStatus = 7,
  kHelp = 8,
  kAxis = 9,       // index = I, value = V in -1..1
  kButton = 10,    // index = I, on = pressed
  kStop = 11,      // ends the job (authorised clients only)
  kMovies = 12,    // lists the movie library
  kLoad = 13,      // movie = NAME, frame = N (0 without one)
  kQueue = 14,     // movie = NAME: appended to the playlist
  kPlaylist = 15,  // on: `playlist clear`
  kNext = 16,      // the playlist's next movie, now
  kPrevious = 17,
};

// ValidMovieName: common/base/words.h.

struct Command {
  CommandKind kind = CommandKind::kStatus;
  int64_t frame = 0;
  int64_t count = 0;
  double value = 0;
  uint32_t index = 0;
  bool on = false;
  std::string movie;  // kLoad
};

// Words separated by blanks; case matters ("play", not "PLAY").
Result<Command> ParseCommand(std::string_view line);

// One line per command, for `help`.
std::string_view CommandHelp();

}  // namespace tilestream
