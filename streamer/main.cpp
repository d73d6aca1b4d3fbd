// streamer: flags -> wall -> MPI communicator -> coordinator or tile rank.
#include <mpi.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "streamer/coordinator.h"
#include "streamer/launch.h"
#include "streamer/streamer_options.h"
#include "streamer/tile_rank.h"

namespace {

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

bool WantsHelp(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tilestream;
  StreamerOptions options;
  if (WantsHelp(argc, argv)) return ParseStreamerFlags(argc, argv, true, &options).value_or(0);

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
  auto wall = ResolveWall(options);
  if (!wall.ok() && !child) {
    if (speaks) fmt::print(stderr, "streamer: {}\n", wall.status().message());
    MPI_Finalize();
    return 2;
  }
  const uint32_t tiles = wall.ok() ? wall->config.tile_count() : 0;
  auto comm = JoinWall(argc, argv, tiles);
  if (!comm.ok()) {
    if (speaks) fmt::print(stderr, "streamer: {}\n", comm.status().message());
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
      fmt::print(stderr, "streamer: tile rank {}: no word from the coordinator; ending the job\n", comm->rank);
    std::fflush(stdout);
    std::fflush(stderr);
    MPI_Abort(comm->comm, 1);
  }
  LeaveWall(&*comm);
  MPI_Finalize();
  return rc;
}
