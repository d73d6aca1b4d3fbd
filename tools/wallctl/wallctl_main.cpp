// wallctl: the control channel from the command line (docs/control.md).
//   wallctl status | play | pause | seek 120 | step -1 | speed -1 | loop off | stop ...
//   wallctl watch                    status refreshed in place every second
//   wallctl movies                   the movie library (a table on a terminal)
//   wallctl load NAME [FRAME]        plays movie NAME of the library; returns once
//                                    every tile shows it, or says why none does
// Prints the JSON reply; exits 0 on {"ok":true}, 1 on an error reply, 2 when
// the streamer cannot be reached.
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "common/base/guarded_main.h"
#include "common/base/json_text.h"
#include "common/base/log_flag.h"
#include "common/net/line_channel.h"
#include "common/wall/token_file.h"
#include "common/wall/wall_config.h"

namespace {

using namespace tilestream;

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

// The next line from the server, or nullopt after timeout_ms.
std::optional<std::string> ReadLine(LineChannel* c, int timeout_ms) {
  const int64_t give_up = MonotonicMs() + timeout_ms;
  for (;;) {
    if (auto line = c->NextLine()) return line;
    if (!c->open()) return std::nullopt;
    const int64_t left = give_up - MonotonicMs();
    if (left <= 0) return std::nullopt;
    pollfd p{c->fd(), POLLIN, 0};
    poll(&p, 1, static_cast<int>(left));
    c->Receive();
  }
}

// Sends one command and returns its reply line.
Result<std::string> Ask(LineChannel* c, const std::string& command, int timeout_ms) {
  if (!c->Send(command)) return Status::IoError("the connection closed (" + c->why() + ")");
  auto reply = ReadLine(c, timeout_ms);
  if (!reply)
    return Status::IoError(c->open() ? "no reply in time"
                                     : "the connection closed (" + c->why() + ")");
  return *reply;
}

// The library as a table, a movie a line: name, layout, tile, frames, fps,
// duration, size, and whether it fits (if not, why). Every text escaped.
std::string MoviesTable(const nlohmann::json& j) {
  std::string out = fmt::format("{:<24} {:>6} {:>10} {:>7} {:>6} {:>9} {:>9}  fits\n", "movie",
                                "layout", "tile", "frames", "fps", "duration", "GB");
  for (const auto& m : j["movies"]) {
    if (!m.is_object()) continue;
    const auto text = [&](const char* key, size_t most = 60) {
      return m.contains(key) && m[key].is_string() ? Printable(m[key].get<std::string>(), most)
                                                   : "-";
    };
    const auto number = [&](const char* key) {
      return m.contains(key) && m[key].is_number() ? m[key].get<double>() : 0.0;
    };
    out += fmt::format("{:<24} {:>6} {:>10} {:>7.0f} {:>6.2f} {:>8.1f}s {:>9.2f}  {}\n",
                       text("name"), text("layout"), text("tile"), number("frames"), number("fps"),
                       number("duration_s"), number("bytes") / 1e9,
                       JsonBool(m, "fits") ? "yes" : "no: " + text("problem", 200));
  }
  if (JsonBool(j, "truncated")) out += "(more movies than listed: the library holds too many)\n";
  return out;
}

std::string TableOf(const nlohmann::json& s) {
  std::string out = fmt::format("{}  frame {}/{}  speed {}  loop {}  tick {}\n",
                                Printable(JsonString(s, "state", "?"), 16), s.value("frame", 0),
                                s.value("frames", 0), s.value("speed", 0.0),
                                s.value("loop", false) ? "on" : "off", s.value("tick", 0));
  if (s.contains("sync")) {
    const auto& y = s["sync"];
    out += fmt::format("sync  {} nodes  {} shown  {} skipped  skew mean {:.2f} max {:.2f} ms\n",
                       y.value("nodes", 0), y.value("shown", 0), y.value("skipped", 0),
                       y.value("skew_mean_ms", 0.0), y.value("skew_max_ms", 0.0));
  }
  out += fmt::format("{:<6} {:>4} {:<8} {:>8} {:>9} {:>7} {:>6} | {:>5} {:>8} {:>10}\n", "tile",
                     "rank", "nic", "Gbit/s", "disk MB/s", "errors", "late", "fps", "lost",
                     "incomplete");
  for (const auto& t : s.value("tiles", nlohmann::json::array())) {
    const auto r = t.value("receiver", nlohmann::json::object());
    out +=
        fmt::format("{:<6} {:>4} {:<8} {:>8.3f} {:>9.1f} {:>7} {:>6} | {:>5} {:>8} {:>10}\n",
                    Printable(JsonString(t, "tile", "?"), 16), t.value("rank", 0),
                    Printable(JsonString(t, "nic", "?"), 16), t.value("gbps", 0.0),
                    t.value("disk_mbytes_per_s", 0.0), t.value("send_errors", 0),
                    t.value("late_frames", 0), r.empty() ? "-" : std::to_string(r.value("fps", 0)),
                    r.empty() ? "-" : std::to_string(r.value("lost", 0)),
                    r.empty() ? "-" : std::to_string(r.value("incomplete", 0)));
  }
  return out;
}

// The status table; a reply whose fields have other types than ours (another
// program on the port, a newer streamer) is said to be one, not a crash.
std::string Table(const nlohmann::json& s) {
  try {
    return TableOf(s);
  } catch (const nlohmann::json::exception&) {
    return "(a status reply this wallctl does not understand: " + Printable(JsonText(s), 200) +
           ")\n";
  }
}

// After `load`'s reply (the tiles pre-roll the movie), waits for how that
// load ended: the tick every tile switched at, or why it was abandoned (a
// tile could not open the movie). Its status fields, or an error.
Result<nlohmann::json> AwaitLoad(LineChannel* c, uint64_t load, int timeout_ms,
                                 int64_t give_up_ms) {
  while (MonotonicMs() < give_up_ms && !g_stop) {
    auto reply = Ask(c, "status", timeout_ms);
    if (!reply.ok()) return reply.status();
    const auto j = nlohmann::json::parse(*reply, nullptr, false);
    if (j.is_object() && j.contains("last_load") && j["last_load"].is_object() &&
        j["last_load"].value("load", uint64_t{0}) >= load) {
      nlohmann::json out = j["last_load"];
      out["ok"] = !out.contains("error");
      return out;
    }
    poll(nullptr, 0, 50);
  }
  return Status::IoError("the tiles did not have the movie's first frames in time");
}

// One command and its reply, printed: the library as a table on a
// terminal, and after `load` how it ended. The exit code.
int AskOnce(LineChannel* channel, const std::string& command, const std::string& name,
            int timeout_ms) {
  auto reply = Ask(channel, command, timeout_ms);
  if (!reply.ok()) {
    spdlog::error("{}", reply.status().message());
    return 2;
  }
  // The reply as JSON again (escaped: nothing a server sends reaches the
  // terminal raw), or quoted if it is not JSON.
  const auto j = nlohmann::json::parse(*reply, nullptr, false);
  if (name == "movies" && JsonBool(j, "ok") && j.contains("movies") && j["movies"].is_array() &&
      isatty(STDOUT_FILENO)) {
    fmt::print("{}", MoviesTable(j));
    return 0;
  }
  if (name == "load" && JsonBool(j, "ok") && j.contains("load") && j["load"].is_number()) {
    auto ended = AwaitLoad(channel, j["load"].get<uint64_t>(), timeout_ms,
                           MonotonicMs() + std::max(timeout_ms, 60'000));
    if (!ended.ok()) {
      spdlog::error("load: {}", ended.status().message());
      return 2;
    }
    fmt::print("{}\n", JsonText(*ended));
    return JsonBool(*ended, "ok") ? 0 : 1;
  }
  fmt::print("{}\n", j.is_discarded() ? Printable(*reply, 4096) : JsonText(j));
  return JsonBool(j, "ok") ? 0 : 1;
}

int Run(int argc, char** argv) {
  CLI::App app{
      "wallctl: controls a playing tilestream wall through the streamer's control channel.\n"
      "Commands: play, pause, toggle, seek N, step +N|-N, speed X, loop on|off, status, help,\n"
      "movies, load NAME [FRAME], queue NAME, playlist [clear], next, previous, axis I V,\n"
      "button I 0|1, stop; and 'watch' (status refreshed in place). 'load' returns once every\n"
      "tile shows the movie (or says why none does).",
      "wallctl"};
  std::string config_path, host, token_file;
  int port = 0;
  double timeout_s = 5, interval_s = 1;
  int count = 0;
  std::vector<std::string> words;
  app.add_option("--config", config_path, "Wall config: the control address, port and token file")
      ->check(CLI::ExistingFile);
  app.add_option("--host", host, "Control address (default: the config's, or 127.0.0.1)");
  app.add_option("--port", port, "Control port (default: the config's, or 7470)")
      ->check(CLI::Range(1, 65535));
  app.add_option("--token-file", token_file,
                 "File with the token, for a listener that is not loopback");
  app.add_option("--timeout", timeout_s, "Seconds to wait for the streamer (default 5)")
      ->check(CLI::Range(0.1, 600.0));
  app.add_option("--interval", interval_s, "watch: seconds between refreshes (default 1)")
      ->check(CLI::Range(0.1, 60.0));
  app.add_option("--count", count, "watch: stop after this many refreshes (default: until Ctrl-C)");
  app.prefix_command();  // the first word not an option starts the command ("step -1" is not a
                         // flag)
  app.footer("Example: wallctl --config configs/demo-5x3.toml seek 120");
  std::string log_level = "info";
  AddLogLevelFlag(&app, &log_level);
  CLI11_PARSE(app, argc, argv);
  (void)SetUpLogging("wallctl", log_level);
  words = app.remaining();
  if (words.empty()) {
    spdlog::error("no command (see --help)");
    return 2;
  }

  WallConfig config = DefaultWallConfig({1, 1});
  if (!config_path.empty()) {
    auto c = LoadWallConfig(config_path);
    if (!c.ok()) {
      spdlog::error("{}", c.status().message());
      return 2;
    }
    config = std::move(c).value();
  }
  if (host.empty()) host = config.control.client_address();
  if (port == 0) port = config.control.port;
  if (token_file.empty()) token_file = config.control.token_file;
  const int timeout_ms = static_cast<int>(timeout_s * 1000);

  auto fd = ConnectTcp(host, static_cast<uint16_t>(port), timeout_ms);
  if (!fd.ok()) {
    spdlog::error("{} (is the streamer playing?)", fd.status().message());
    return 2;
  }
  // A reply can be longer than a command: `movies` lists up to 1,024 movies
  // (some 300 KB); the server sends no more than kMaxPendingOutput at once.
  LineChannel channel(std::move(fd).value(), kMaxPendingOutput);
  if (!token_file.empty()) {
    auto token = ReadToken(token_file);
    if (!token.ok()) {
      spdlog::error("{}", token.status().message());
      return 2;
    }
    auto reply = Ask(&channel, "auth " + *token, timeout_ms);
    const auto j = nlohmann::json::parse(reply.ok() ? *reply : "", nullptr, false);
    if (!reply.ok() || !JsonBool(j, "ok")) {
      spdlog::error("auth refused: {}",
                    reply.ok() ? Printable(*reply, 300) : reply.status().message());
      return 2;
    }
  }

  std::string command;
  for (const std::string& w : words) command += (command.empty() ? "" : " ") + w;
  if (command != "watch") return AskOnce(&channel, command, words[0], timeout_ms);

  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  const bool tty = isatty(STDOUT_FILENO);
  for (int n = 0; !g_stop && (count <= 0 || n < count); ++n) {
    auto reply = Ask(&channel, "status", timeout_ms);
    if (!reply.ok()) {
      spdlog::error("{}", reply.status().message());
      return 2;
    }
    const auto j = nlohmann::json::parse(*reply, nullptr, false);
    if (!j.is_object()) return 1;
    fmt::print("{}{}", tty ? "\033[H\033[2J" : (n ? "\n" : ""), Table(j));
    std::fflush(stdout);
    const int64_t until = MonotonicMs() + static_cast<int64_t>(interval_s * 1000);
    while (!g_stop && MonotonicMs() < until) poll(nullptr, 0, 50);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tilestream::GuardedMain("wallctl", [&] { return Run(argc, argv); });
}
