#include "common/control/movie_listing.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common/base/json_text.h"
#include "common/wall/server_hosts.h"

namespace tilestream {

nlohmann::json MovieListing(const std::string& path, const Library& library) {
  nlohmann::json movies = nlohmann::json::array();
  for (const LibraryMovie& movie : library.movies) {
    nlohmann::json j{{"name", movie.name}, {"fits", movie.problem.empty()}};
    if (const auto& m = movie.manifest) {
      j["title"] = m->title;
      j["layout"] = m->layout.ToString();
      j["tile"] = fmt::format("{}x{}", m->tile.width, m->tile.height);
      j["frames"] = m->frames;
      j["fps"] = m->fps;
      j["duration_s"] = m->fps > 0 ? static_cast<double>(m->frames) / m->fps : 0.0;
      j["bytes"] = movie.bytes;
    }
    if (!movie.problem.empty()) j["problem"] = movie.problem;
    movies.push_back(std::move(j));
  }
  return {{"library", path}, {"truncated", library.truncated}, {"movies", std::move(movies)}};
}

std::string MoviesReply(const ControlCommands::MovieList& list) {
  if (!list)
    return ErrorReply("no movie library (library.path in the config, or streamer --library)");
  auto listing = list();
  if (!listing.ok()) return ErrorReply(listing.status().message());
  (*listing)["ok"] = true;
  return JsonText(*listing);
}

std::function<bool(uint32_t tile)> TilesOnThisHost(const WallConfig& c) {
  std::vector<bool> here(c.tile_count(), true);
  if (c.servers.size() > 1) {
    const int server = ServerOfHost(c, ThisHost());
    for (uint32_t t = 0; t < here.size(); ++t)
      here[t] = server >= 0 && c.routes[t].server == static_cast<uint32_t>(server);
  }
  return [here](uint32_t t) { return t < here.size() && here[t]; };
}

ControlCommands::MovieList LibraryLister(const WallConfig& c, const LibraryPresence* presence) {
  return [path = c.library_path, wall = c.wall, here = TilesOnThisHost(c),
          presence]() -> Result<nlohmann::json> {
    auto library = ScanLibrary(path, wall, here);
    if (!library.ok()) return library.status();
    if (presence) presence->Apply(&*library);
    return MovieListing(path, *library);
  };
}

}  // namespace tilestream
