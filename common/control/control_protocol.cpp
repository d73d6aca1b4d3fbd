#include "common/control/control_protocol.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "common/base/json_text.h"
#include "common/base/words.h"

namespace tilestream {
namespace {

constexpr size_t kMaxWords = 4;

// Numbers of a command may carry a "+" ("step +5").
std::string_view Unsigned(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  return s;
}

template <typename T>
bool Integer(std::string_view s, T* out) {
  return ParseInteger(Unsigned(s), out);
}

bool Real(std::string_view s, double* out) { return ParseReal(Unsigned(s), out); }

std::string Shown(std::string_view s) { return Printable(s, 40); }

}  // namespace

std::string_view CommandHelp() {
  return "play | pause | toggle | seek N | step +N|-N | speed X (negative: backwards) | loop "
         "on|off | status | "
         "help | movies | load NAME [FRAME] | queue NAME | playlist [clear] | next | previous | "
         "axis I V (V in -1..1) | button I 0|1 | stop";
}

Result<Command> ParseCommand(std::string_view line) {
  std::array<std::string_view, kMaxWords> w;
  size_t n = 0;
  if (!SplitWords(line, &w, &n)) return Status::InvalidArgument("too many words");
  if (n == 0) return Status::InvalidArgument("empty command");
  Command c;
  const std::string_view name = w[0];
  auto args = [&](size_t want) -> Status {
    if (n - 1 == want) return Status::Ok();
    return Status::InvalidArgument(
        fmt::format("{} takes {} argument{}", name, want, want == 1 ? "" : "s"));
  };
  auto bad = [&](std::string_view what, std::string_view got) {
    return Status::InvalidArgument(
        fmt::format("{}: expected {}, got '{}'", name, what, Shown(got)));
  };
  if (name == "play" || name == "pause" || name == "toggle" || name == "status" || name == "help" ||
      name == "stop" || name == "movies" || name == "next" || name == "previous") {
    TS_RETURN_IF_ERROR(args(0));
    c.kind = name == "play"       ? CommandKind::kPlay
             : name == "pause"    ? CommandKind::kPause
             : name == "toggle"   ? CommandKind::kToggle
             : name == "status"   ? CommandKind::kStatus
             : name == "help"     ? CommandKind::kHelp
             : name == "movies"   ? CommandKind::kMovies
             : name == "next"     ? CommandKind::kNext
             : name == "previous" ? CommandKind::kPrevious
                                  : CommandKind::kStop;
    return c;
  }
  if (name == "seek") {
    TS_RETURN_IF_ERROR(args(1));
    c.kind = CommandKind::kSeek;
    if (!Integer(w[1], &c.frame) || c.frame < 0) return bad("a frame number >= 0", w[1]);
    return c;
  }
  if (name == "load") {
    if (n != 2 && n != 3) return Status::InvalidArgument("load takes a movie's name and a frame");
    c.kind = CommandKind::kLoad;
    if (!ValidMovieName(w[1])) return bad("a movie's name (as `movies` lists it)", w[1]);
    c.movie = std::string(w[1]);
    if (n == 3 && (!Integer(w[2], &c.frame) || c.frame < 0))
      return bad("a frame number >= 0", w[2]);
    return c;
  }
  if (name == "queue") {
    TS_RETURN_IF_ERROR(args(1));
    c.kind = CommandKind::kQueue;
    if (!ValidMovieName(w[1])) return bad("a movie's name (as `movies` lists it)", w[1]);
    c.movie = std::string(w[1]);
    return c;
  }
  if (name == "playlist") {
    if (n > 2) return Status::InvalidArgument("playlist takes nothing, or clear");
    c.kind = CommandKind::kPlaylist;
    if (n == 2 && w[1] != "clear") return bad("clear", w[1]);
    c.on = n == 2;
    return c;
  }
  if (name == "step") {
    TS_RETURN_IF_ERROR(args(1));
    c.kind = CommandKind::kStep;
    if (!Integer(w[1], &c.count) || c.count < -1'000'000 || c.count > 1'000'000)
      return bad("+N or -N frames", w[1]);
    return c;
  }
  if (name == "speed") {
    TS_RETURN_IF_ERROR(args(1));
    c.kind = CommandKind::kSpeed;
    if (!Real(w[1], &c.value) || std::abs(c.value) > 64) return bad("a speed -64..64", w[1]);
    return c;
  }
  if (name == "loop") {
    TS_RETURN_IF_ERROR(args(1));
    c.kind = CommandKind::kLoop;
    if (w[1] != "on" && w[1] != "off") return bad("on or off", w[1]);
    c.on = w[1] == "on";
    return c;
  }
  if (name == "axis") {
    TS_RETURN_IF_ERROR(args(2));
    c.kind = CommandKind::kAxis;
    if (!Integer(w[1], &c.index) || c.index > 255) return bad("an axis 0..255", w[1]);
    if (!Real(w[2], &c.value) || c.value < -1 || c.value > 1) return bad("a value -1..1", w[2]);
    return c;
  }
  if (name == "button") {
    TS_RETURN_IF_ERROR(args(2));
    c.kind = CommandKind::kButton;
    if (!Integer(w[1], &c.index) || c.index > 255) return bad("a button 0..255", w[1]);
    if (w[2] != "0" && w[2] != "1") return bad("0 or 1", w[2]);
    c.on = w[2] == "1";
    return c;
  }
  return Status::InvalidArgument(fmt::format("unknown command '{}' (try help)", Shown(name)));
}

}  // namespace tilestream
