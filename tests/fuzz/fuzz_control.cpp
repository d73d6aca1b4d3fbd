// Any line as a control command or a swap-sync line; a parsed command must
// be in its documented ranges, and playback must survive applying it.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/control_protocol.h"
#include "common/playback.h"
#include "common/swap_sync.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  tilestream::ParseSyncReport(line);
  tilestream::ParseSyncEvent(line);
  auto c = tilestream::ParseCommand(line);
  if (!c.ok()) return 0;
  if (!std::isfinite(c->value) || c->value < -64 || c->value > 64 || c->frame < 0) __builtin_trap();
  tilestream::Playback p(7, 30);
  std::string error;
  p.Apply(*c, &error);
  for (int i = 0; i < 20; ++i)
    if (p.Advance() >= 7) __builtin_trap();
  return 0;
}
