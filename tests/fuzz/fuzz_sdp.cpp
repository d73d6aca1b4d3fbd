// Any text as an SDP file.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/wire/sdp.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto d = tilestream::ParseSdp(std::string_view(reinterpret_cast<const char*>(data), size));
  if (d.ok() && (d->tile.width == 0 || d->tile.height == 0)) __builtin_trap();
  return 0;
}
