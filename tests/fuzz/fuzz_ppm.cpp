// Any bytes as a PPM file.
#include <cstddef>
#include <cstdint>

#include "common/image/ppm.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto img = tilestream::ParsePpm({reinterpret_cast<const std::byte*>(data), size}, "fuzz.ppm");
  if (img.ok() && img->rgb.size() != size_t{img->width} * img->height * 3) __builtin_trap();
  return 0;
}
