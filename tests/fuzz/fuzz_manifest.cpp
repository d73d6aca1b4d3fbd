// Any text as a movie.toml: refused with a message or accepted, never a crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/store/tile_store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto m = tilestream::ParseManifest(std::string_view(reinterpret_cast<const char*>(data), size),
                                     "/movie", "fuzz/movie.toml");
  if (m.ok() && m->tile_files.size() != m->layout.tile_count()) __builtin_trap();
  return 0;
}
