// Which movies of the library every server of the wall holds (docs/control.md,
// `movies`). On a wall over several servers each server's store holds the
// files of its own tiles; the coordinator sees only its own host's. One
// tile rank per server looks at its library now and then and reports the
// movies whose files for its tiles are whole; a movie counts as present only
// when every server's last report names it. With one server the coordinator's
// own look is the whole truth and this is inactive. Thread-safe: the frame
// clock takes reports, the HTTP thread lists.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/store/movie_library.h"
#include "common/wall/wall_config.h"

namespace tilestream {

class LibraryPresence {
 public:
  explicit LibraryPresence(const WallConfig& c);

  // Server `server`'s report: the names of its whole movies, a line each
  // (names that are not valid movie names are dropped). Replaces the one
  // before.
  void Report(uint32_t server, std::string_view names);
  // Why movie `name` is not on every server ("" when it is, or when the wall
  // has one server): names the first server that lacks it.
  std::string Missing(const std::string& name) const;
  // Each movie of `library` that fits but is not on every server gets that
  // as its problem.
  void Apply(Library* library) const;

 private:
  std::vector<std::string> servers_;  // names; empty: one server, inactive
  mutable std::mutex mu_;
  std::vector<std::optional<std::set<std::string>>> reports_;  // none yet: nullopt
};

// A server's report for LibraryPresence::Report: `library`'s movies that fit
// (their files for this host's tiles whole), a name a line.
std::string PresentMovies(const Library& library);

}  // namespace tilestream
