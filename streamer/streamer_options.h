// The streamer's command line and how it combines with the wall config and
// the movie into the wall that is streamed. No MPI here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "common/store/tile_store.h"
#include "common/wall/wall_config.h"

namespace tilestream {

struct StreamerOptions {
  std::string config_path;
  std::string layout;
  std::string movie_dir;
  std::string library_dir;        // "": the config's library.path
  std::vector<std::string> live;  // --live NAME=SDP, each a [[live]] more
  double fps = 0;                 // 0: config's (or the movie's without a config)
  uint32_t mtu = 0;               // 0: config's
  std::string pacing;             // "", "on", "off"
  std::string retransmission;     // "", "on", "off"
  uint32_t port_base = 0;
  std::string sdp_dir;
  bool bench = false;
  bool check = false;           // pre-flight checks of this host, then exit (no MPI)
  bool print_hostfile = false;  // print the config's hostfile, then exit (no MPI)
  bool print_mpirun_options = false;
  std::string source = "disk";  // bench: disk or memory
  double duration_s = 0;        // 0: until stopped
  uint64_t ticks = 0;           // play: stop after this many ticks (0: never)
  double rate_gbps = 0;         // bench, paced: per stream; 0 = the wall's fps
  std::string json_path;
  uint32_t ring_frames = 4;
  int clock_priority = 10;  // SCHED_FIFO priority of the frame clock; 0: none
  bool shed = true;         // drop the same ticks on every tile when senders fall behind
  bool quiet = false;
  std::string log_level = "info";  // common/base/log.h
};

// Parses the flags. Returns an exit code to end with (help printed: 0, bad
// flags: 2), or nullopt to go on. `print` false keeps it silent (ranks > 0).
std::optional<int> ParseStreamerFlags(int argc, char** argv, bool print, StreamerOptions* out);

struct Wall {
  WallConfig config;
  std::optional<MovieManifest> movie;  // none: bench from memory, synthetic frames
  std::string live_movie;              // --movie NAME of a live source: loaded at the start
};

// Loads the config (or the defaults for --layout), applies the flags, opens
// the movie and checks it against the wall. Without --config the tile size
// and fps come from the movie.
Result<Wall> ResolveWall(const StreamerOptions& o);

}  // namespace tilestream
