// The coordinator's side of `load` (docs/streamer.md, "Loading a movie"):
// the movie playing, the load under way and which tiles have pre-rolled
// it, and how the last load ended. A load switches the wall only once
// every tile has its new movie's first frames in; then every tile takes
// the new movie at the same tick (the ticks carry the generations,
// streamer/messages.h). A tile that cannot open it abandons the load and
// the movie playing plays on. Plain logic, no MPI; not thread-safe (the
// frame clock's thread).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/result.h"
#include "common/control/library_presence.h"
#include "common/wall/wall_config.h"

namespace tilestream {

class MovieLoads {
 public:
  struct Movie {
    std::string name;  // in the library ("" for the synthetic pattern)
    std::string dir;
    uint64_t frames = 0;
  };

  MovieLoads(uint32_t tiles, Movie playing) : ready_(tiles, false), playing_(std::move(playing)) {}

  // A load of `movie` from `first_frame` begins (replacing one under way):
  // its generation, which the tiles are sent with it. `at_end`: the
  // playlist's next movie, switched to only as the one playing ends.
  uint64_t Begin(const Movie& movie, uint64_t first_frame, bool at_end = false);
  // Tile's report of its pre-roll of load `generation`: done, or failed
  // with `message`. Returns the error that abandoned the load under way
  // (said once), or nullopt.
  std::optional<std::string> Loaded(uint64_t generation, uint32_t tile, bool ok,
                                    std::string_view message, const std::string& tile_name);
  // The load every tile is ready for, taken to switch at tick `tick` (one
  // for the end only if `at_end`: the movie playing sent its last frame):
  // the movie now playing, and the frame it starts at. Nullopt if none.
  std::optional<uint64_t> TakeReady(uint64_t tick, bool at_end = false);
  bool loading() const { return loading_.has_value(); }

  uint64_t sent() const { return sent_; }  // TickMessage::load_generation
  uint64_t playing_generation() const { return playing_generation_; }  // ::movie_generation
  const Movie& playing() const { return playing_; }
  // status: "movie", and "loading" or "last_load" while there is one.
  void AddStatus(nlohmann::json* out) const;

 private:
  std::vector<bool> ready_;
  uint32_t ready_count_ = 0;
  Movie playing_;
  uint64_t playing_generation_ = 0;
  uint64_t sent_ = 0;
  std::optional<Movie> loading_;  // generation sent_
  uint64_t first_frame_ = 0;
  bool at_end_ = false;
  nlohmann::json last_;  // how the last load ended
};

// Movie `name` of c's library, if it can be loaded from `first_frame`: it
// fits the wall and its files for this host's tiles are whole (each tile
// rank opens its own), and, with `presence`, every other server has it.
// Else why not, naming what differs.
Result<MovieLoads::Movie> LoadableMovie(const WallConfig& c, const std::string& name,
                                        uint64_t first_frame,
                                        const LibraryPresence* presence = nullptr);

}  // namespace tilestream
