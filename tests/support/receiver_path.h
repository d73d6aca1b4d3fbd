// Test helper: the receiver program the end-to-end tests start. The build's
// own (RECEIVER_PATH), unless TILESTREAM_RECEIVER names another build of it:
// ctest's receiver_under_tsan runs the tests against the ThreadSanitizer one.
#pragma once

#include <cstdlib>
#include <string>

#include "tests/support/built_paths.h"

namespace tilestream::testing {

inline std::string ReceiverPath() {
  const char* other = std::getenv("TILESTREAM_RECEIVER");
  return other && *other ? std::string(other) : RECEIVER_PATH;
}

}  // namespace tilestream::testing
