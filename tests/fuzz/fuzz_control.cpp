// The control channel's whole path, line in to reply out: the input is split
// into lines as the server splits them (any of "\n", "\r\n", "\r"), and each
// line is parsed as a swap-sync line and as a command, applied to a real
// playback and answered. Every reply must be one line of valid JSON with a
// boolean "ok", a parsed command must be in its documented ranges, and
// playback must stay inside the movie. The whole input is also read as a
// sync datagram, and each line as the lines of the decision at the wall's
// side.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/control/control_commands.h"
#include "common/control/control_protocol.h"
#include "common/control/playback.h"
#include "common/control/swap_sync.h"
#include "common/control/sync_datagram.h"
#include "common/control/tick_leader.h"

namespace {

void CheckReply(const std::string& reply) {
  if (reply.find('\n') != std::string::npos) __builtin_trap();
  const auto j = nlohmann::json::parse(reply, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("ok") || !j["ok"].is_boolean()) __builtin_trap();
}

void OneLine(std::string_view line, tilestream::ControlCommands* commands,
             tilestream::Playback* playback) {
  tilestream::ParseSyncReport(line);
  tilestream::ParseSyncEvent(line);
  tilestream::ParseRtt(line);
  for (const char* word : {"ping", "pong", "latency", "nack_copies", "lan"})
    if (auto n = tilestream::ParseStamp(word, line); n && *n < 0) __builtin_trap();
  // The decision at the wall's side (common/control/tick_leader.h): each
  // parsed set is of the wall's tiles.
  for (const uint32_t tiles : {1u, 15u, tilestream::kMaxLedTiles}) {
    if (auto t = tilestream::ParseOpen(line, tiles); t && t->takers.size() != tiles)
      __builtin_trap();
    if (auto d = tilestream::ParseDecided(line, tiles); d && d->complete.size() != tiles)
      __builtin_trap();
    if (auto g = tilestream::ParseGone(line, tiles); g && g->size() != tiles) __builtin_trap();
  }
  tilestream::ParseLeader(line);
  tilestream::ParseLead(line);
  tilestream::ParsePeer(line);
  if (auto c = tilestream::ParseCommand(line); c.ok()) {
    if (!std::isfinite(c->value) || c->value < -64 || c->value > 64 || c->frame < 0)
      __builtin_trap();
  }
  CheckReply(commands->Handle(line));
  for (int i = 0; i < 3; ++i)
    if (playback->Advance() >= playback->frames()) __builtin_trap();
}

// The whole input as a sync datagram too (common/control/sync_datagram.h):
// refused, or its lines within bounds and inside the input.
void OneDatagram(std::string_view input) {
  const auto d = tilestream::ParseSyncDatagram(input);
  if (!d) return;
  if (input.size() > tilestream::kMaxSyncDatagram || d->count > tilestream::kMaxSyncDatagramLines)
    __builtin_trap();
  for (size_t i = 0; i < d->count; ++i) {
    const std::string_view line = d->lines[i];
    if (line.empty() || line.data() < input.data() ||
        line.data() + line.size() > input.data() + input.size())
      __builtin_trap();
    tilestream::ParseSyncEvent(line);
    tilestream::ParseSyncReport(line);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  OneDatagram(input);
  tilestream::Playback playback(7, 30);
  tilestream::ControlCommands commands(
      [](nlohmann::json* j) { (*j)["tiles"] = nlohmann::json::array(); });
  commands.set_playback(&playback);
  for (int lines = 0; !input.empty() && lines < 64; ++lines) {
    const size_t end = input.find_first_of("\r\n");
    OneLine(input.substr(0, end), &commands, &playback);
    if (end == std::string_view::npos) break;
    input.remove_prefix(end + 1);
  }
  return 0;
}
