#include "receiver/receiver_options.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>

#include "common/base/log_flag.h"
#include "receiver/sdp_streams.h"

namespace tilestream {
namespace {

// What the flags say beyond the options themselves.
struct Choices {
  bool headless = false, mosaic = false, span = false, per_tile = false;
  bool no_placement = false, no_retransmission = false, no_sync = false;
  std::string window;
};

void AddSourceFlags(CLI::App* app, ReceiverFlags* f) {
  app->add_option("--config", f->config_path,
                  "Wall config (TOML); without: the default loopback wall")
      ->check(CLI::ExistingFile);
  app->add_option("--sdp", f->sdp_files,
                  "Receive the stream this SDP file describes (repeatable: one tile each, left to "
                  "right), from any RFC 4175 RGB sender: GStreamer, ffmpeg, our streamer's "
                  "--sdp-dir; instead of --config")
      ->check(CLI::ExistingFile);
  app->add_option("--layout", f->layout,
                  "Tiles as COLUMNSxROWS when there is no --config (default 5x3)");
  app->add_option("--node", f->node.node,
                  "Display node of the config to serve (default: localhost)");
}

void AddDisplayFlags(CLI::App* app, ReceiverFlags* f, Choices* c) {
  NodeReceiverOptions& o = f->node;
  app->add_flag("--headless", c->headless, "No window: statistics only");
  app->add_flag("--tiles", c->per_tile,
                "One window per tile, fullscreen on the tile's display (the config's displays)");
  app->add_flag("--windowed", o.display.windowed,
                "With --tiles: ordinary windows of the tile's size");
  app->add_flag("--span", c->span,
                "One borderless window spanning the node's tiles at native size");
  app->add_flag("--mosaic", c->mosaic,
                "One window showing the node's tiles as the wall, scaled down (bezels black)");
  app->add_flag("--overlay", o.overlay, "Start with the overlay shown (the key o toggles it)");
  app->add_option("--window", c->window, "Mosaic window size WxH (default 1280x480)");
  app->add_option(
      "--screenshot", o.screenshot,
      "Save the last picture to this file (PPM; FILE-N.ppm per window; headless: per tile, "
      "as last shown)");
}

void AddRunFlags(CLI::App* app, ReceiverFlags* f, Choices* c) {
  NodeReceiverOptions& o = f->node;
  app->add_option("--duration", o.duration_s,
                  "Stop after this many seconds (default: until Ctrl-C)");
  app->add_option("--json", o.json_path, "Write the final report as JSON to this file");
  app->add_option("--present-log", o.present_log,
                  "With the swap sync: write 'tile timestamp realtime_ns' for every tile frame "
                  "shown, when it was shown (bench/live_latency.sh)");
  app->add_option("--frame-log", o.frame_log,
                  "Write 'tile timestamp checksum' for every complete frame");
  app->add_flag("--partial", o.show_partial,
                "Hand on incomplete frames instead of holding the previous one");
  app->add_flag("--no-placement", c->no_placement,
                "Copy every packet's pixels into the frame instead of receiving them in place "
                "(for comparisons)");
  app->add_flag("--no-retransmission", c->no_retransmission,
                "Never ask the streamer for lost packets again (NACK), whatever the config says");
  app->add_flag("--check", f->check,
                "Check this host against the config (socket buffers, backlog, the node's ports), "
                "print each finding with its fix, and exit");
  app->add_flag("--no-sync", c->no_sync,
                "Show frames as they come, without the coordinator's swap sync");
  app->add_option("--sync-priority", o.sync_priority,
                  "SCHED_FIFO priority of the thread that acts on the swap sync's decisions where "
                  "permitted (root or CAP_SYS_NICE), within 5 ms of work per 100 ms; 0: normal "
                  "priority")
      ->check(CLI::Range(0, 99));
  app->add_flag("-q,--quiet", o.quiet, "No line per second");
  AddLogLevelFlag(app, &f->log_level);
}

// Applies the choices to the options; false (said) when they do not fit.
bool Apply(const Choices& c, ReceiverFlags* f) {
  NodeReceiverOptions& o = f->node;
  o.sync = !c.no_sync;
  o.placement = !c.no_placement;
  o.retransmission = !c.no_retransmission;
  if (!f->check && c.headless + c.mosaic + c.span + c.per_tile != 1) {
    spdlog::error("choose one of --headless, --tiles, --span, --mosaic");
    return false;
  }
  o.display.mode = c.headless ? DisplayMode::kHeadless
                   : c.mosaic ? DisplayMode::kMosaic
                   : c.span   ? DisplayMode::kSpan
                              : DisplayMode::kTiles;
  if (c.window.empty()) return true;
  auto size = ParseSize(c.window, "--window", 64, 16384);
  if (!size.ok()) {
    spdlog::error("{}", size.status().message());
    return false;
  }
  o.display.window_width = static_cast<int>(size->width);
  o.display.window_height = static_cast<int>(size->height);
  return true;
}

// SDP files, a config file, or the default loopback wall of --layout.
Result<WallConfig> WallOfFlags(const ReceiverFlags& f) {
  if (!f.sdp_files.empty()) {
    if (!f.config_path.empty() || !f.layout.empty())
      return Status::InvalidArgument(
          "--sdp describes the streams: no --config or --layout with it");
    auto streams = ReadSdpFiles(f.sdp_files);
    if (!streams.ok()) return streams.status();
    return WallConfigForStreams(*streams, f.sdp_files);
  }
  if (!f.config_path.empty()) return LoadWallConfig(f.config_path);
  auto l = ParseLayout(f.layout.empty() ? "5x3" : f.layout);
  if (!l.ok()) return Status::InvalidArgument("--layout: " + l.status().message());
  return DefaultWallConfig(*l);
}

}  // namespace

std::optional<int> ParseReceiverFlags(int argc, char** argv, ReceiverFlags* flags) {
  CLI::App app{
      "tilestream receiver: receives the tiles a display node shows (RTP/RFC 4175 over UDP),\n"
      "reassembles frames, counts loss, and shows them: one fullscreen window per tile (--tiles),\n"
      "one window spanning the node's tiles (--span), the whole wall scaled down (--mosaic), or\n"
      "not at all (--headless). Keys: o toggles an overlay (fps, Gbit/s, loss, tick); Esc or q "
      "quits.",
      "receiver"};
  Choices choices;
  AddSourceFlags(&app, flags);
  AddDisplayFlags(&app, flags, &choices);
  AddRunFlags(&app, flags, &choices);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (!Apply(choices, flags)) return 2;
  return std::nullopt;
}

Result<WallConfig> ReceiverWallConfig(ReceiverFlags* flags) {
  Result<WallConfig> c = WallOfFlags(*flags);
  if (c.ok() && flags->node.node.empty())
    flags->node.node = c->nodes.size() == 1 ? c->nodes[0].name : "localhost";
  return c;
}

}  // namespace tilestream
