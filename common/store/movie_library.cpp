#include "common/store/movie_library.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <system_error>

namespace tilestream {
namespace fs = std::filesystem;
namespace {

// Why the tiles held here cannot play (a file missing or of the wrong
// size), or empty; adds the sizes of those found to *bytes.
std::string TileFilesProblem(const MovieManifest& m, const std::function<bool(uint32_t tile)>& here,
                             uint64_t* bytes) {
  const uint64_t expected = m.frames * m.frame_stride;
  for (uint32_t t = 0; t < m.tile_files.size(); ++t) {
    if (here && !here(t)) continue;
    const std::string name = TileId::FromIndex(t, m.layout).Name();
    struct stat st {};
    if (stat(m.TilePath(t).c_str(), &st) != 0)
      return fmt::format("tile {}: no file {}", name, m.TilePath(t));
    *bytes += static_cast<uint64_t>(st.st_size);
    if (static_cast<uint64_t>(st.st_size) != expected)
      return fmt::format("tile {}: {} bytes, expected {} (truncated?)", name, st.st_size, expected);
  }
  return "";
}

LibraryMovie Look(const fs::path& dir, const WallSettings& wall,
                  const std::function<bool(uint32_t tile)>& here) {
  LibraryMovie movie;
  movie.name = dir.filename().string();
  auto m = OpenTileStore(dir.string(), /*check_files=*/false);
  if (!m.ok()) {
    movie.problem = m.status().message();
    return movie;
  }
  movie.manifest = std::move(m).value();
  const MovieManifest& manifest = *movie.manifest;
  if (manifest.layout != wall.layout || manifest.tile != wall.tile) {
    movie.problem =
        fmt::format("cut for {} tiles of {}x{}; the wall is {} tiles of {}x{}",
                    manifest.layout.ToString(), manifest.tile.width, manifest.tile.height,
                    wall.layout.ToString(), wall.tile.width, wall.tile.height);
  } else if (std::abs(manifest.fps - wall.fps) > 1e-6 * wall.fps) {
    // docs/decisions.md, "Loading a movie into a playing wall": the tick
    // rate is the wall's, and a movie is never played at another speed.
    movie.problem = fmt::format("cut at {:g} fps; the wall plays {:g} fps", manifest.fps, wall.fps);
  }
  const std::string files = TileFilesProblem(manifest, here, &movie.bytes);
  if (movie.problem.empty()) movie.problem = files;
  return movie;
}

}  // namespace

LibraryMovie LookUpMovie(const std::string& path, const std::string& name, const WallSettings& wall,
                         const std::function<bool(uint32_t tile)>& here) {
  const fs::path dir = fs::path(path) / name;
  std::error_code ec;
  if (!fs::exists(dir / kManifestName, ec)) {
    LibraryMovie movie;
    movie.name = name;
    movie.problem = fmt::format("no movie {} in the library {}", name, path);
    return movie;
  }
  return Look(dir, wall, here);
}

Result<Library> ScanLibrary(const std::string& path, const WallSettings& wall,
                            const std::function<bool(uint32_t tile)>& here) {
  std::error_code ec;
  fs::directory_iterator it(path, ec);
  if (ec) return Status::IoError(fmt::format("movie library {}: {}", path, ec.message()));
  std::vector<fs::path> dirs;
  Library library;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) return Status::IoError(fmt::format("movie library {}: {}", path, ec.message()));
    const fs::path p = it->path();
    if (p.filename().string().starts_with('.') || !it->is_directory(ec) ||
        !fs::exists(p / kManifestName, ec))
      continue;
    dirs.push_back(p);
    if (dirs.size() >= 16 * kMaxLibraryMovies) break;  // the first by the directory's order
  }
  std::sort(dirs.begin(), dirs.end());
  if (dirs.size() > kMaxLibraryMovies || it != fs::directory_iterator()) {
    dirs.resize(kMaxLibraryMovies);
    library.truncated = true;
  }
  for (const fs::path& d : dirs) library.movies.push_back(Look(d, wall, here));
  return library;
}

}  // namespace tilestream
