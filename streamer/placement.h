// Where the ranks of a wall over several servers run (docs/operations.md,
// "Two servers"; decided in docs/decisions.md). Rank 0, the coordinator, on
// the first [[server]]; then one rank per tile, the tiles in server order
// (streamer/rank_plan.h). So an Open MPI hostfile that gives each server,
// in that order, one slot per tile (the first one more), mapped by slot,
// puts every rank on the server that holds its tile's file and NIC; every
// rank still checks where it landed, so a hand-made hostfile that puts a
// rank elsewhere is refused, naming the tile and both hosts. No MPI here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/base/result.h"
#include "common/wall/wall_config.h"
#include "streamer/rank_plan.h"

namespace tilestream {

// The hostfile for `mpirun --hostfile FILE --map-by slot -n RanksOfWall(c)`.
std::string Hostfile(const WallConfig& c);
int RanksOfWall(const WallConfig& c);  // tiles + 1

// mpirun's options that keep MPI and its daemons on [mpi] network: one
// argument per element (none when the config leaves it to Open MPI).
std::vector<std::string> MpirunOptions(const WallConfig& c);

// A wall over several servers runs one rank per tile, from a hostfile
// (never spawned, never more or fewer ranks): OK, or what to run instead.
Status CheckWorldSize(const WallConfig& c, int world_size);

// Whether `rank` (0: the coordinator) runs on its tiles' server; the error
// names the tile, the server and both host names.
Status CheckPlacement(const WallConfig& c, const RankPlan& plan, int rank, std::string_view host);

}  // namespace tilestream
