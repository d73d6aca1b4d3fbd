// The REST API's calls as control lines (docs/control.md "The web side"):
// `POST /api/seek {"frame": 120}` is the line `seek 120`, so a call goes
// through the same ControlCommands as the TCP channel's line. The body is
// untrusted bytes; nothing here throws.
#pragma once

#include <string>
#include <string_view>

#include "common/base/result.h"

namespace tilestream {

// The line of call `call` ("play", "pause", "toggle", "stop", "seek",
// "step", "speed", "loop", "load", "next", "previous", "playlist") with JSON body `body` (empty:
// none), or an error saying what body the call expects.
Result<std::string> ControlLineOfRestCall(std::string_view call, std::string_view body);

}  // namespace tilestream
