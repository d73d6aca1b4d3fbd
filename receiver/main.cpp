// receiver: flags -> wall config -> the node's tile receivers.
#include <fmt/format.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <atomic>

#include "common/check/preflight.h"
#include "common/wall/wall_config.h"
#include "receiver/node_receiver.h"
#include "receiver/sdp_streams.h"

namespace {
std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }
}  // namespace

int main(int argc, char** argv) {
  using namespace tilestream;
  CLI::App app{
      "tilestream receiver: receives the tiles a display node shows (RTP/RFC 4175 over UDP),\n"
      "reassembles frames, counts loss, and shows them: one fullscreen window per tile (--tiles),\n"
      "one window spanning the node's tiles (--span), the whole wall scaled down (--mosaic), or\n"
      "not at all (--headless). Keys: o toggles an overlay (fps, Gbit/s, loss, tick); Esc or q "
      "quits.",
      "receiver"};
  std::string config_path, layout;
  bool headless = false, mosaic = false, span = false, per_tile = false;
  NodeReceiverOptions o;
  app.add_option("--config", config_path, "Wall config (TOML); without: the default loopback wall")
      ->check(CLI::ExistingFile);
  std::vector<std::string> sdp_files;
  app.add_option(
         "--sdp", sdp_files,
         "Receive the stream this SDP file describes (repeatable: one tile each, left to right), "
         "from any "
         "RFC 4175 RGB sender: GStreamer, ffmpeg, our streamer's --sdp-dir; instead of --config")
      ->check(CLI::ExistingFile);
  app.add_option("--layout", layout,
                 "Tiles as COLUMNSxROWS when there is no --config (default 5x3)");
  app.add_option("--node", o.node, "Display node of the config to serve (default: localhost)");
  app.add_flag("--headless", headless, "No window: statistics only");
  std::string window;
  app.add_flag("--tiles", per_tile,
               "One window per tile, fullscreen on the tile's display (the config's displays)");
  app.add_flag("--windowed", o.display.windowed,
               "With --tiles: ordinary windows of the tile's size");
  app.add_flag("--span", span, "One borderless window spanning the node's tiles at native size");
  app.add_flag("--mosaic", mosaic,
               "One window showing the node's tiles as the wall, scaled down (bezels black)");
  app.add_flag("--overlay", o.overlay, "Start with the overlay shown (the key o toggles it)");
  app.add_option("--window", window, "Mosaic window size WxH (default 1280x480)");
  app.add_option("--screenshot", o.screenshot,
                 "Save the last picture to this file (PPM; FILE-N.ppm per window)");
  app.add_option("--duration", o.duration_s,
                 "Stop after this many seconds (default: until Ctrl-C)");
  app.add_option("--json", o.json_path, "Write the final report as JSON to this file");
  app.add_option("--frame-log", o.frame_log,
                 "Write 'tile timestamp checksum' for every complete frame");
  app.add_flag("--partial", o.show_partial,
               "Hand on incomplete frames instead of holding the previous one");
  bool no_placement = false;
  app.add_flag("--no-placement", no_placement,
               "Copy every packet's pixels into the frame instead of receiving them in place (for "
               "comparisons)");
  bool no_retransmission = false;
  app.add_flag("--no-retransmission", no_retransmission,
               "Never ask the streamer for lost packets again (NACK), whatever the config says");
  bool no_sync = false, check = false;
  app.add_flag(
      "--check", check,
      "Check this host against the config (socket buffers, backlog, the node's ports), print each "
      "finding with its fix, and exit");
  app.add_flag("--no-sync", no_sync,
               "Show frames as they come, without the coordinator's swap sync");
  app.add_flag("-q,--quiet", o.quiet, "No line per second");
  CLI11_PARSE(app, argc, argv);
  o.sync = !no_sync;
  o.placement = !no_placement;
  o.retransmission = !no_retransmission;
  if (!check && headless + mosaic + span + per_tile != 1) {
    fmt::print(stderr, "receiver: choose one of --headless, --tiles, --span, --mosaic\n");
    return 2;
  }
  o.display.mode = headless ? DisplayMode::kHeadless
                   : mosaic ? DisplayMode::kMosaic
                   : span   ? DisplayMode::kSpan
                            : DisplayMode::kTiles;
  if (!window.empty()) {
    auto size = ParseSize(window, "--window", 64, 16384);
    if (!size.ok()) {
      fmt::print(stderr, "receiver: {}\n", size.status().message());
      return 2;
    }
    o.display.window_width = static_cast<int>(size->width);
    o.display.window_height = static_cast<int>(size->height);
  }
  WallConfig config;
  if (!sdp_files.empty()) {
    if (!config_path.empty() || !layout.empty()) {
      fmt::print(stderr,
                 "receiver: --sdp describes the streams: no --config or --layout with it\n");
      return 2;
    }
    auto streams = ReadSdpFiles(sdp_files);
    auto c = streams.ok() ? WallConfigForStreams(*streams, sdp_files)
                          : Result<WallConfig>(streams.status());
    if (!c.ok()) {
      fmt::print(stderr, "receiver: {}\n", c.status().message());
      return 2;
    }
    config = std::move(c).value();
  } else if (!config_path.empty()) {
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
  if (check) {
    for (uint32_t n = 0; n < config.nodes.size(); ++n) {
      if (config.nodes[n].name != o.node) continue;
      bool failed = false;
      fmt::print("receiver: pre-flight check of node {} for {}\n{}", o.node, config.source,
                 FormatFindings(CheckReceiverHost(config, n), &failed));
      return failed ? 1 : 0;
    }
    fmt::print(stderr, "receiver: no display node '{}' in {}\n", o.node, config.source);
    return 2;
  }
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  return RunNodeReceiver(config, o, &g_stop);
}
