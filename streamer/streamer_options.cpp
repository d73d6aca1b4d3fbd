#include "streamer/streamer_options.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>

#include "common/base/json_text.h"
#include "common/base/log_flag.h"
#include "common/control/control_protocol.h"
#include "common/wall/server_hosts.h"

namespace tilestream {

namespace {

// What is streamed and how: the wall, the movie, the stream settings.
void AddWallFlags(CLI::App* app, StreamerOptions* o) {
  app->add_option("--config", o->config_path, "Wall config (TOML), see docs/config.md")
      ->check(CLI::ExistingFile);
  app->add_option("--layout", o->layout,
                  "Tiles as COLUMNSxROWS; overrides the config (default 5x3)");
  app->add_option(
      "--movie", o->movie_dir,
      "Tile store directory (make one with wallcut), or the name of a movie of the library or "
      "of a live source (--live, [[live]]); none with a library or a live source: the wall "
      "starts black and waits for `load`");
  app->add_option("--library", o->library_dir,
                  "Movie library: a directory of tile stores, one per subdirectory (wallctl "
                  "movies lists them); overrides library.path");
  app->add_option("--live", o->live,
                  "A live source as NAME=SDP_FILE (repeatable): the RTP stream the SDP file "
                  "describes, played by `load NAME` like a movie (docs/live.md); adds to the "
                  "config's [[live]]");
  app->add_option("--fps", o->fps, "Frame rate of the wall clock; overrides the config");
  app->add_option("--mtu", o->mtu, "Link MTU; UDP payload is MTU - 40; overrides the config");
  app->add_option("--pacing", o->pacing,
                  "on: spread each frame over the frame interval; off: as fast as possible")
      ->check(CLI::IsMember({"on", "off"}));
  app->add_option(
         "--retransmission", o->retransmission,
         "on: answer the receivers' NACKs with retransmissions (RFC 4588); overrides the config")
      ->check(CLI::IsMember({"on", "off"}));
  app->add_option("--port-base", o->port_base,
                  "UDP port of tile 0; tile i uses base + i; overrides the config");
  app->add_option("--sdp-dir", o->sdp_dir,
                  "Write one SDP file per tile stream into this directory");
}

// How long, from where, and what is reported.
void AddRunFlags(CLI::App* app, StreamerOptions* o) {
  app->add_option("--ticks", o->ticks,
                  "Stop after this many frame ticks (default: run until stopped)");
  app->add_option("--duration", o->duration_s,
                  "Stop after this many seconds (default: run until stopped)");
  app->add_option("--ring-frames", o->ring_frames, "Read-ahead buffers per tile (>= 3)")
      ->check(CLI::Range(3, 64));
  app->add_option("--clock-priority", o->clock_priority,
                  "SCHED_FIFO priority of the coordinator's frame clock where permitted (root or "
                  "CAP_SYS_NICE), within 5 ms of work per 100 ms; 0: normal priority")
      ->check(CLI::Range(0, 99));
  app->add_flag("--shed,!--no-shed", o->shed,
                "When the tile ranks fall behind, drop the same evenly spread ticks on every tile "
                "(default) or, with --no-shed, let each rank skip ticks on its own (for "
                "measuring overload)");
  app->add_flag("--bench", o->bench,
                "Benchmark mode: tiles send as fast as allowed, throughput only");
  app->add_flag(
      "--check", o->check,
      "Check this host against the config (socket buffers, NIC MTU and NUMA node, control port, "
      "O_DIRECT and read rate of --movie), print each finding with its fix, and exit; no mpirun "
      "needed");
  app->add_option("--source", o->source,
                  "Frames from the tile store (disk, default) or memory: the first 4 frames of the "
                  "movie, or a "
                  "synthetic pattern without --movie (benchmarks, and playing without disks)")
      ->check(CLI::IsMember({"disk", "memory"}));
  app->add_option(
      "--rate", o->rate_gbps,
      "Benchmark with pacing: Gbit/s of UDP payload per stream (default: the wall's fps)");
  app->add_option("--json", o->json_path, "Write the final report as JSON to this file");
  app->add_flag("--print-hostfile", o->print_hostfile,
                "Print the Open MPI hostfile that puts each tile's rank on its [[server]] "
                "(a wall over several servers), and exit");
  app->add_flag("--print-mpirun-options", o->print_mpirun_options,
                "Print mpirun's options for the config's [mpi] network, one per line, and exit");
  app->add_flag("-q,--quiet", o->quiet,
                "No line per second (the plan and the final report are still printed)");
  AddLogLevelFlag(app, &o->log_level);
}

}  // namespace

std::optional<int> ParseStreamerFlags(int argc, char** argv, bool print, StreamerOptions* o) {
  CLI::App app{
      "tilestream streamer: one MPI rank per display tile streams the tile's frames as paced "
      "RTP/RFC 4175\n"
      "over UDP to the tile's display node; rank 0 is the coordinator (frame clock, "
      "statistics).\n\n"
      "  mpirun -n 1 --oversubscribe streamer --layout 5x3 --movie DIR   # rank 0 spawns 15 tile "
      "ranks\n"
      "  mpirun -n 16 streamer --config configs/sara-5x3.toml --movie DIR  # tiles + 1 ranks, "
      "static\n"
      "  mpirun -n 1 --oversubscribe streamer --layout 5x3 --bench --source memory --pacing off "
      "--duration 10\n\n"
      "Stop with SIGTERM to mpirun (kill PID): every rank stops and rank 0 prints the final "
      "report.\n"
      "Ctrl-C makes mpirun kill the ranks at once (Open MPI cannot forward SIGINT); "
      "scripts/streamer.sh\n"
      "turns Ctrl-C into SIGTERM.",
      "streamer"};
  AddWallFlags(&app, o);
  AddRunFlags(&app, o);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (!print) return e.get_exit_code() == 0 ? 0 : 2;
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return std::nullopt;
}

namespace {

// Each --live NAME=SDP_FILE, a [[live]] more (validated with the config).
Status AddLiveSources(const StreamerOptions& o, WallConfig* c) {
  for (const std::string& live : o.live) {
    const size_t eq = live.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == live.size())
      return Status::InvalidArgument(fmt::format("--live {}: not NAME=SDP_FILE", Printable(live)));
    LiveSourceSettings& l = c->live.emplace_back();
    l.name = live.substr(0, eq);
    l.sdp = live.substr(eq + 1);
  }
  return Status::Ok();
}

}  // namespace

// --movie NAME names a live source (--live, or the config's [[live]]) and
// no movie of the library.
static bool NamesLiveSource(const StreamerOptions& o, const WallConfig& c,
                            const std::string& library) {
  const std::string& name = o.movie_dir;
  if (!ValidMovieName(name)) return false;
  if (!library.empty() && std::filesystem::exists(std::filesystem::path(library) / name))
    return false;
  for (const std::string& live : o.live)
    if (live.starts_with(name + "=")) return true;
  return std::any_of(c.live.begin(), c.live.end(),
                     [&](const LiveSourceSettings& l) { return l.name == name; });
}

// What --movie names: a live source, a movie of the library, or a tile
// store's directory (on a wall of several servers, relative to this host's
// store); none where the wall may start black.
static Status ResolveMovie(const StreamerOptions& o, Wall* wall) {
  Wall& w = *wall;
  const std::string library = o.library_dir.empty() ? w.config.library_path : o.library_dir;
  if (!o.movie_dir.empty() && NamesLiveSource(o, w.config, library)) {
    w.live_movie = o.movie_dir;  // loaded once the wall is up (docs/live.md)
  } else if (!o.movie_dir.empty()) {
    const bool named =
        !library.empty() && ValidMovieName(o.movie_dir) &&
        std::filesystem::exists(std::filesystem::path(library) / o.movie_dir / kManifestName);
    auto dir = named                   ? (std::filesystem::path(library) / o.movie_dir).string()
               : o.config_path.empty() ? o.movie_dir
                                       : MovieOnThisHost(w.config, o.movie_dir, ThisHost());
    if (!dir.ok()) return dir.status();
    auto m = OpenTileStore(*dir, /*check_files=*/false);  // each tile rank checks its own
    if (!m.ok()) return m.status();
    w.movie = std::move(m).value();
  } else if (o.source != "memory" && ((library.empty() && o.live.empty() &&
                                       (o.config_path.empty() || w.config.live.empty())) ||
                                      o.bench)) {
    return Status::InvalidArgument(
        "--movie DIR is required (make one with wallcut), except for "
        "--source memory or with a movie library or a live source (the wall then starts "
        "black, waiting for `load`)");
  }
  return Status::Ok();
}

Result<Wall> ResolveWall(const StreamerOptions& o) {
  Wall w;
  std::optional<Layout> layout;
  if (!o.layout.empty()) {
    auto l = ParseLayout(o.layout);
    if (!l.ok()) return Status::InvalidArgument("--layout: " + l.status().message());
    layout = *l;
  }
  if (!o.config_path.empty()) {
    auto c = LoadWallConfig(o.config_path);
    if (!c.ok()) return c.status();
    w.config = std::move(c).value();
    if (layout) w.config.wall.layout = *layout;
  }
  TS_RETURN_IF_ERROR(ResolveMovie(o, &w));
  if (o.config_path.empty()) {
    w.config = DefaultWallConfig(layout.value_or(w.movie ? w.movie->layout : Layout{5, 3}));
    if (w.movie) {  // no wall config: the movie says what the tiles are
      w.config.wall.tile = w.movie->tile;
      w.config.wall.fps = w.movie->fps;
    }
  }
  WallConfig& c = w.config;
  if (o.fps > 0) c.wall.fps = o.fps;
  if (o.mtu > 0) c.stream.mtu = o.mtu;
  if (!o.pacing.empty()) c.stream.pacing = o.pacing == "on";
  if (!o.retransmission.empty()) c.stream.retransmission = o.retransmission == "on";
  if (o.port_base > 0)
    c.stream.port_base = static_cast<uint16_t>(std::min<uint32_t>(o.port_base, 65535));
  if (!o.library_dir.empty()) c.library_path = o.library_dir;
  TS_RETURN_IF_ERROR(AddLiveSources(o, &c));
  if (!o.config_path.empty() || o.fps > 0 || o.mtu > 0 || o.port_base > 0 || layout ||
      !o.retransmission.empty() || !o.live.empty())
    TS_RETURN_IF_ERROR(ValidateWallConfig(&c));
  if (w.movie) TS_RETURN_IF_ERROR(CheckManifestMatchesWall(*w.movie, c.wall));
  if (o.bench && o.source == "disk" && !w.movie)
    return Status::InvalidArgument("--bench --source disk needs --movie");
  return w;
}

}  // namespace tilestream
