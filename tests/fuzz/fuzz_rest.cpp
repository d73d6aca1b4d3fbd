// The REST API's calls (common/control/rest_calls.h) with any body, through
// to the command handler, as the coordinator runs them: the first byte picks
// the call, the rest is the body. A body that is accepted must give one
// line that starts with the call's name; every reply must be one line of
// valid JSON with a boolean "ok"; playback must stay inside the movie.
#include <array>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/base/json_text.h"
#include "common/control/control_commands.h"
#include "common/control/playback.h"
#include "common/control/rest_calls.h"

namespace {

constexpr std::array<std::string_view, 9> kCalls{"play", "pause", "toggle", "stop", "seek",
                                                 "step", "speed", "loop",   "bogus"};

void CheckReply(const std::string& reply) {
  if (reply.find('\n') != std::string::npos) __builtin_trap();
  const auto j = nlohmann::json::parse(reply, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("ok") || !j["ok"].is_boolean()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view call = kCalls[data[0] % kCalls.size()];
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  tilestream::Playback playback(7, 30);
  tilestream::ControlCommands commands;
  commands.set_playback(&playback);
  const auto line = tilestream::ControlLineOfRestCall(call, body);
  if (!line.ok()) {
    CheckReply(tilestream::ErrorReply(line.status().message()));
    return 0;
  }
  if (!line->starts_with(call) || line->find_first_of("\r\n") != std::string::npos)
    __builtin_trap();
  CheckReply(commands.Handle(*line));
  for (int i = 0; i < 3; ++i)
    if (playback.Advance() >= playback.frames()) __builtin_trap();
  return 0;
}
