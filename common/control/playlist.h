// The wall's playlist (docs/control.md, "Playlist"): movies of the library
// by name, in order, and where in it the movie playing is. `queue` adds,
// `next`/`previous` load the neighbour, and the coordinator pre-rolls the
// next one in the last second of the one playing so that the wall goes on
// from one movie's last frame to the next one's first (streamer/
// movie_loads.h). With loop on the list starts over after its last movie.
// Plain logic; not thread-safe (the coordinator's thread).
#pragma once

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/base/result.h"

namespace tilestream {

class Playlist {
 public:
  static constexpr size_t kMaxMovies = 256;

  // Appends movie `name` (checked by the caller). An error when full.
  Status Queue(const std::string& name);
  void Clear();
  // The wall now plays `name`: its place is the next entry of that name
  // from the current place on (a list may hold a movie twice), or none
  // when the list does not hold it.
  void Playing(const std::string& name);
  // The movie after (before) the one playing: the first (none) when the
  // playing one is not in the list; at either end the other end if `wrap`,
  // else none.
  std::optional<std::string> After(bool wrap) const;
  std::optional<std::string> Before(bool wrap) const;

  bool empty() const { return movies_.empty(); }
  int current() const { return current_; }  // -1: the movie playing is not in the list
  // {"playlist":[NAME,...],"current":I}
  nlohmann::json ToJson() const;

 private:
  std::vector<std::string> movies_;
  int current_ = -1;
};

}  // namespace tilestream
