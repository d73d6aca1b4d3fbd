// Forming the wall's communicator: rank 0 is the coordinator, ranks 1..n
// stream the tiles (streamer/rank_plan.h). Either mpirun started two or
// more ranks (static: with fewer than tiles + 1 a rank streams several
// tiles, with more the extra ones idle), or it started one rank and that
// spawns a rank per tile with MPI_Comm_spawn; the spawned children find
// their parent and the two merge.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "common/base/result.h"

namespace tilestream {

struct WallComm {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 0;
  bool spawned = false;            // tile ranks were spawned by rank 0
  MPI_Comm inter = MPI_COMM_NULL;  // parent <-> children, when spawned
};

// Frees the communicators (disconnecting spawned ranks from their parent) so
// that MPI_Finalize closes the connections in order.
void LeaveWall(WallComm* w);

// Exit code of a rank whose peer died: MPI_Finalize could wait for the dead
// rank forever, so main ends the job with MPI_Abort instead.
inline constexpr int kExitPeerGone = 3;

// Whether this process was spawned by a coordinator.
bool IsSpawnedTileRank();

// REQUIRES: MPI initialised. `argv` is passed to spawned ranks unchanged.
Result<WallComm> JoinWall(int argc, char** argv, uint32_t tiles);

}  // namespace tilestream
