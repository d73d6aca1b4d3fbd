#include "streamer/rank_loads.h"

#include <cstring>
#include <string>

#include "streamer/rank_messages.h"

namespace tilestream {

void RankLoads::Take(const TickMessage& tick) {
  // The switch first: the tick that switches to a movie may announce the
  // next one's load too (a playlist's short movie), which replaces what
  // is prepared. The coordinator switches only to a load every tile
  // reported ready, so the last one taken.
  if (tick.movie_generation != playing_ && tick.movie_generation == seen_) {
    for (auto& s : *streams_) s->SwitchToPrepared();
    playing_ = tick.movie_generation;
  }
  // Sent before the tick that carries its generation: here by now.
  while (seen_ < tick.load_generation) {
    LoadMessage m;
    MPI_Recv(&m, sizeof m, MPI_BYTE, 0, kTagLoad, comm_, MPI_STATUS_IGNORE);
    m.movie[sizeof m.movie - 1] = '\0';
    seen_ = m.generation;
    if (seen_ < tick.load_generation) continue;  // replaced already
    for (auto& s : *streams_) s->Prepare(m.movie, m.first_frame);
    reported_.assign(streams_->size(), false);
    pending_ = true;
  }
}

void RankLoads::Report() {
  if (!pending_) return;
  pending_ = false;
  for (size_t i = 0; i < streams_->size(); ++i) {
    if (reported_[i]) continue;
    TileStream& s = *(*streams_)[i];
    std::string error;
    const TileStream::Preroll p = s.preroll(&error);
    if (p == TileStream::Preroll::kLoading) {
      pending_ = true;
      continue;
    }
    reported_[i] = true;
    if (p == TileStream::Preroll::kNone) continue;
    LoadedMessage m;
    m.generation = seen_;
    m.tile = s.tile();
    m.ok = p == TileStream::Preroll::kReady;
    std::strncpy(m.message, error.c_str(), sizeof m.message - 1);
    SendMessage(comm_, 0, kTagLoaded, m);
  }
}

}  // namespace tilestream
