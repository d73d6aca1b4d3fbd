// Any text as a wall config: refused with a message or accepted, never a crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/wall/wall_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto c = tilestream::ParseWallConfig(std::string_view(reinterpret_cast<const char*>(data), size),
                                       "fuzz.toml");
  if (c.ok() && c->routes.size() != c->tile_count()) __builtin_trap();
  return 0;
}
