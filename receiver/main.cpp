// receiver: flags -> wall config -> the node's tile receivers.
#include <signal.h>

#include <atomic>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "common/wall_config.h"
#include "receiver/node_receiver.h"

namespace {
std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }
}  // namespace

int main(int argc, char** argv) {
  using namespace tilestream;
  CLI::App app{"tilestream receiver: receives the tiles a display node shows (RTP/RFC 4175 over UDP),\n"
               "reassembles frames, counts loss, and shows them in a mosaic window (--mosaic) or not\n"
               "(--headless). Esc or q closes the window.",
               "receiver"};
  std::string config_path, layout;
  bool headless = false;
  NodeReceiverOptions o;
  app.add_option("--config", config_path, "Wall config (TOML); without: the default loopback wall")
      ->check(CLI::ExistingFile);
  app.add_option("--layout", layout, "Tiles as COLUMNSxROWS when there is no --config (default 5x3)");
  app.add_option("--node", o.node, "Display node of the config to serve (default: localhost)");
  app.add_flag("--headless", headless, "No window: statistics only");
  std::string window;
  app.add_flag("--mosaic", o.mosaic, "One window showing the node's tiles as the wall, scaled down (bezels black)");
  app.add_option("--window", window, "Mosaic window size WxH (default 1280x480)");
  app.add_option("--screenshot", o.screenshot, "Mosaic: save the last picture to this file (PPM)");
  app.add_option("--duration", o.duration_s, "Stop after this many seconds (default: until Ctrl-C)");
  app.add_option("--json", o.json_path, "Write the final report as JSON to this file");
  app.add_option("--frame-log", o.frame_log, "Write 'tile timestamp checksum' for every complete frame");
  app.add_flag("--partial", o.show_partial, "Hand on incomplete frames instead of holding the previous one");
  bool no_sync = false;
  app.add_flag("--no-sync", no_sync, "Show frames as they come, without the coordinator's swap sync");
  app.add_flag("-q,--quiet", o.quiet, "No line per second");
  CLI11_PARSE(app, argc, argv);
  o.sync = !no_sync;
  if (headless == o.mosaic) {
    fmt::print(stderr, "receiver: choose --headless or --mosaic (per-tile fullscreen windows are not built yet)\n");
    return 2;
  }
  if (!window.empty()) {
    auto size = ParseSize(window, "--window", 64, 16384);
    if (!size.ok()) {
      fmt::print(stderr, "receiver: {}\n", size.status().message());
      return 2;
    }
    o.window_width = static_cast<int>(size->width);
    o.window_height = static_cast<int>(size->height);
  }
  WallConfig config;
  if (!config_path.empty()) {
    auto c = LoadWallConfig(config_path);
    if (!c.ok()) {
      fmt::print(stderr, "receiver: {}\n", c.status().message());
      return 2;
    }
    config = std::move(c).value();
  } else {
    auto l = ParseLayout(layout.empty() ? "5x3" : layout);
    if (!l.ok()) {
      fmt::print(stderr, "receiver: --layout: {}\n", l.status().message());
      return 2;
    }
    config = DefaultWallConfig(*l);
  }
  if (o.node.empty()) o.node = config.nodes.size() == 1 ? config.nodes[0].name : "localhost";
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  return RunNodeReceiver(config, o, &g_stop);
}
