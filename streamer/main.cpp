// streamer: flags -> wall -> MPI communicator -> coordinator or tile rank.
#include <fmt/format.h>
#include <mpi.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "common/base/log.h"
#include "common/check/preflight.h"
#include "common/wall/server_hosts.h"
#include "streamer/coordinator.h"
#include "streamer/launch.h"
#include "streamer/placement.h"
#include "streamer/streamer_options.h"
#include "streamer/tile_rank.h"

namespace {

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

bool HasFlag(int argc, char** argv, const char* a, const char* b = nullptr) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], a) == 0 || (b && std::strcmp(argv[i], b) == 0)) return true;
  return false;
}

// --check: the pre-flight checks of this host, without MPI.
int Check(int argc, char** argv) {
  using namespace tilestream;
  StreamerOptions options;
  if (auto rc = ParseStreamerFlags(argc, argv, true, &options)) return *rc;
  (void)SetUpLogging("streamer", options.log_level);
  if (options.movie_dir.empty()) options.source = "memory";  // no store to check
  auto wall = ResolveWall(options);
  if (!wall.ok()) {
    spdlog::error("{}", wall.status().message());
    return 2;
  }
  std::vector<Finding> findings = CheckStreamerHost(wall->config);
  if (wall->movie) {
    // This server's first tile (on a wall of several, the others are elsewhere).
    const WallConfig& c = wall->config;
    const int server = ServerOfHost(c, ThisHost());
    uint32_t tile = 0;
    while (tile + 1 < c.tile_count() && static_cast<int>(c.routes[tile].server) != server) ++tile;
    auto store = CheckStore(*wall->movie, c, tile);
    findings.insert(findings.end(), store.begin(), store.end());
  }
  bool failed = false;
  fmt::print("streamer: pre-flight check of this host for {}\n{}", wall->config.source,
             FormatFindings(findings, &failed));
  return failed ? 1 : 0;
}

// --print-hostfile, --print-mpirun-options: what the launcher hands mpirun
// for the config, without MPI.
int PrintLaunch(int argc, char** argv) {
  using namespace tilestream;
  StreamerOptions options;
  if (auto rc = ParseStreamerFlags(argc, argv, true, &options)) return *rc;
  (void)SetUpLogging("streamer", options.log_level);
  if (options.config_path.empty()) {
    spdlog::error("--print-hostfile and --print-mpirun-options need --config");
    return 2;
  }
  auto config = LoadWallConfig(options.config_path);
  if (!config.ok()) {
    spdlog::error("{}", config.status().message());
    return 2;
  }
  if (options.print_hostfile) fmt::print("{}", Hostfile(*config));
  if (options.print_mpirun_options)
    for (const std::string& o : MpirunOptions(*config)) fmt::print("{}\n", o);
  return 0;
}

// --help, --check and --print-*: answered without MPI.
std::optional<int> WithoutMpi(int argc, char** argv) {
  tilestream::StreamerOptions options;
  if (HasFlag(argc, argv, "-h", "--help"))
    return tilestream::ParseStreamerFlags(argc, argv, true, &options).value_or(0);
  if (HasFlag(argc, argv, "--check")) return Check(argc, argv);
  if (HasFlag(argc, argv, "--print-hostfile", "--print-mpirun-options"))
    return PrintLaunch(argc, argv);
  return std::nullopt;
}

// The wall, checked against the job mpirun started (a wall over several
// servers needs one rank per tile); every rank of the job finds the same.
tilestream::Result<tilestream::Wall> ResolveJobWall(const tilestream::StreamerOptions& options,
                                                    bool child) {
  auto wall = tilestream::ResolveWall(options);
  if (!wall.ok() || child) return wall;
  int world = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  TS_RETURN_IF_ERROR(tilestream::CheckWorldSize(wall->config, world));
  return wall;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tilestream;
  StreamerOptions options;
  (void)SetUpLogging("streamer");
  if (auto rc = WithoutMpi(argc, argv)) return *rc;

  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  const bool child = IsSpawnedTileRank();
  const bool speaks = world_rank == 0 && !child;  // one voice for errors every rank finds

  if (auto rc = ParseStreamerFlags(argc, argv, speaks, &options)) {
    MPI_Finalize();
    return *rc;
  }
  (void)SetUpLogging("streamer", options.log_level);  // a known level: the flag checks it
  auto wall = ResolveJobWall(options, child);
  if (!wall.ok() && !child) {
    if (speaks) spdlog::error("{}", wall.status().message());
    MPI_Finalize();
    return 2;
  }
  const uint32_t tiles = wall.ok() ? wall->config.tile_count() : 0;
  auto comm = JoinWall(argc, argv, tiles);
  if (!comm.ok()) {
    if (speaks) spdlog::error("{}", comm.status().message());
    MPI_Finalize();
    return 2;
  }
  int rc;
  if (comm->rank == 0) {
    rc = RunCoordinator(*comm, options, *wall, &g_stop);
  } else if (!wall.ok()) {
    ReportSetUpFailure(*comm, wall.status().message());
    rc = 1;
  } else {
    rc = RunTileRank(*comm, options, *wall, &g_stop);
  }
  if (rc == kExitPeerGone) {
    // A rank died: finalizing could wait for it forever. End the job.
    if (comm->rank != 0)
      spdlog::error("tile rank {}: no word from the coordinator; ending the job", comm->rank);
    std::fflush(stdout);
    std::fflush(stderr);
    MPI_Abort(comm->comm, 1);
  }
  LeaveWall(&*comm);
  MPI_Finalize();
  return rc;
}
