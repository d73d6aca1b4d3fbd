// The control channel's shared secret, read from the file a config names
// (control.token_file, docs/control.md).
#pragma once

#include <string>

#include "common/base/result.h"

namespace tilestream {

// The token in `path`: its first line, surrounding whitespace removed; an
// empty token is an error.
Result<std::string> ReadToken(const std::string& path);

}  // namespace tilestream
