// joystick: drives the wall from a joystick or game controller over the
// streamer's control channel (docs/control.md).
#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdio>

#include "common/base/guarded_main.h"
#include "common/base/log_flag.h"
#include "common/wall/token_file.h"
#include "common/wall/wall_config.h"
#include "tools/joystick/joystick_client.h"

namespace {
std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

int Run(int argc, char** argv) {
  using namespace tilestream;
  CLI::App app{
      "joystick: sends a joystick's axes and buttons to a playing tilestream wall. What they do "
      "is\n"
      "the wall config's [joystick] table (default: stick X scrubs, button 0 play/pause, buttons "
      "4/5\n"
      "step back/forward). Reconnects when the streamer restarts; Ctrl-C quits.",
      "joystick"};
  std::string config_path, host, token_file;
  int port = 0;
  bool list = false;
  double seconds = 0;
  JoystickClientOptions o;
  app.add_option("--config", config_path, "Wall config: the control address, port and token file")
      ->check(CLI::ExistingFile);
  app.add_option("--host", host, "Control address (default: the config's, or 127.0.0.1)");
  app.add_option("--port", port, "Control port (default: the config's, or 7470)")
      ->check(CLI::Range(1, 65535));
  app.add_option("--token-file", token_file,
                 "File with the token, for a listener that is not loopback");
  app.add_option("--device", o.device, "Joystick index (see --list; default 0)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--dead-zone", o.dead_zone,
                 "Stick values below this are the centre (default 0.15)")
      ->check(CLI::Range(0.0, 0.9));
  app.add_option("--rate", o.max_rate_hz, "Axis updates per second at most (default 30)")
      ->check(CLI::Range(1.0, 1000.0));
  app.add_option("--duration", seconds, "Quit after this many seconds (default: until Ctrl-C)");
  app.add_flag("--list", list, "List the joysticks and quit");
  std::string log_level = "info";
  AddLogLevelFlag(&app, &log_level);
  CLI11_PARSE(app, argc, argv);
  (void)SetUpLogging("joystick", log_level);

  SDL_SetHint(SDL_HINT_JOYSTICK_ALLOW_BACKGROUND_EVENTS, "1");
  if (SDL_Init(SDL_INIT_JOYSTICK) != 0) {
    spdlog::error("SDL: {}", SDL_GetError());
    return 2;
  }
  if (list) {
    fmt::print("{}", ListJoysticks());
    SDL_Quit();
    return 0;
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
  o.address = host.empty() ? config.control.client_address() : host;
  o.port = static_cast<uint16_t>(port ? port : config.control.port);
  if (token_file.empty()) token_file = config.control.token_file;
  if (!token_file.empty()) {
    auto token = ReadToken(token_file);
    if (!token.ok()) {
      spdlog::error("{}", token.status().message());
      return 2;
    }
    o.token = *token;
  }
  if (SDL_NumJoysticks() <= o.device)
    fmt::print("joystick: no joystick {} yet; waiting for one\n", o.device);
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  {
    JoystickClient client(o);
    const uint64_t end =
        seconds > 0 ? SDL_GetTicks64() + static_cast<uint64_t>(seconds * 1000) : UINT64_MAX;
    while (!g_stop && SDL_GetTicks64() < end) client.Poll(100);
  }
  SDL_Quit();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tilestream::GuardedMain("joystick", [&] { return Run(argc, argv); });
}
