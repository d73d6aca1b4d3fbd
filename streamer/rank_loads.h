// A tile rank's side of `load` (docs/streamer.md, "Loading a movie"): when
// a tick says a load was sent, takes its LoadMessage and starts every
// tile's pre-roll; reports each tile's pre-roll once it is done (or
// failed); and at the first tick of the new movie switches every tile to
// it, before that tick's frame is queued.
#pragma once

#include <mpi.h>

#include <memory>
#include <vector>

#include "streamer/messages.h"
#include "streamer/tile_stream.h"

namespace tilestream {

class RankLoads {
 public:
  RankLoads(MPI_Comm comm, std::vector<std::unique_ptr<TileStream>>* streams)
      : comm_(comm), streams_(streams) {}

  // Before `tick` is played. REQUIRES: no tile busy.
  void Take(const TickMessage& tick);
  // Between frames: the pre-rolls done since the last look, to the
  // coordinator. Cheap when there is none under way.
  void Report();

 private:
  MPI_Comm comm_;
  std::vector<std::unique_ptr<TileStream>>* streams_;
  uint64_t seen_ = 0;     // the last load taken
  uint64_t playing_ = 0;  // the load whose movie plays (0: the first movie)
  std::vector<bool> reported_;
  bool pending_ = false;  // a pre-roll not reported yet
};

}  // namespace tilestream
