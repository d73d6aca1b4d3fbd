// Which tiles each tile rank streams. Rank 0 is the coordinator; ranks
// 1..n share the wall's tiles, so any world size mpirun picks works:
//   n == tiles: rank t + 1 streams tile t, as always;
//   n <  tiles: a rank streams several tiles in one pacing loop. Tiles are
//     ordered by the NUMA node of their NIC, then the NIC, and dealt out in
//     contiguous runs as even as possible (sizes differ by one at most),
//     each ending where a NIC's tiles end whenever either size allows, so a
//     rank's tiles share a NIC and NUMA node wherever the counts allow;
//   n >  tiles: ranks past tiles + 1 stream nothing and wait for the end
//     (mpirun starts a rank per slot unless told otherwise, and a wall must
//     play on a server with more cores than it has tiles).
// On a wall of several servers the tiles are ordered by server first, so
// that ranks 1..n fill the first server's slots, then the next's
// (streamer/placement.h; such a wall runs n == tiles).
// No MPI here: the coordinator and the tile ranks compute the same plan.
#pragma once

#include <cstdint>
#include <vector>

#include "common/wall/wall_config.h"

namespace tilestream {

class RankPlan {
 public:
  // `ranks`: the ranks besides the coordinator. REQUIRES: ranks >= 1.
  RankPlan(const WallConfig& c, uint32_t ranks);

  // The ranks with tiles to stream: 1..tile_ranks().
  int tile_ranks() const { return tile_ranks_; }
  // The tiles of rank `rank` (1..ranks), in sending order; none past
  // tile_ranks().
  const std::vector<uint32_t>& tiles(int rank) const {
    return tiles_[static_cast<size_t>(rank - 1)];
  }
  int rank(uint32_t tile) const { return rank_[tile]; }

 private:
  std::vector<std::vector<uint32_t>> tiles_;
  std::vector<int> rank_;
  int tile_ranks_ = 0;
};

}  // namespace tilestream
