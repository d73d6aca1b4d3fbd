#include "common/store/movie_manifest.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/wall/toml_reader.h"

namespace tilestream {
namespace fs = std::filesystem;
namespace {

constexpr const char* kFormat = "tilestream-tiles";
constexpr int64_t kVersion = 1;

}  // namespace

size_t FrameStride(const TileGeometry& tile) {
  return (tile.frame_bytes() + kStoreAlignment - 1) / kStoreAlignment * kStoreAlignment;
}

std::string TileFileName(const TileId& id) {
  return fmt::format("tile_r{}_c{}.rgb", id.row, id.column);
}

std::string MovieManifest::TilePath(uint32_t tile_index) const {
  const std::string& f = tile_files[tile_index];
  return f.starts_with('/') ? f : (fs::path(directory) / f).string();
}

std::string ManifestToToml(const MovieManifest& m) {
  const auto n = [](auto v) { return static_cast<int64_t>(v); };  // TOML integers are signed
  toml::table movie{{"format", kFormat},
                    {"version", kVersion},
                    {"title", m.title},
                    {"columns", n(m.layout.columns)},
                    {"rows", n(m.layout.rows)},
                    {"tile_width", n(m.tile.width)},
                    {"tile_height", n(m.tile.height)},
                    {"bezel_x", n(m.bezel_x)},
                    {"bezel_y", n(m.bezel_y)},
                    {"pixel_format", "rgb24"},
                    {"fps", m.fps},
                    {"frames", n(m.frames)},
                    {"frame_stride", n(m.frame_stride)}};
  toml::array tiles;
  for (uint32_t t = 0; t < m.tile_files.size(); ++t) {
    const TileId id = TileId::FromIndex(t, m.layout);
    tiles.push_back(
        toml::table{{"row", n(id.row)}, {"column", n(id.column)}, {"file", m.tile_files[t]}});
  }
  const toml::table root{{"movie", std::move(movie)}, {"tile", std::move(tiles)}};
  std::ostringstream out;
  out << "# A tilestream movie: one file per tile, frames padded to frame_stride.\n"
         "# See docs/tile_store.md.\n\n"
      << toml::toml_formatter(root) << '\n';
  return out.str();
}

Result<MovieManifest> ParseManifest(std::string_view toml_text, const std::string& directory,
                                    const std::string& source) {
  auto parsed = ParseToml(toml_text, source);
  if (!parsed.ok()) return parsed.status();
  const toml::table& root = *parsed;
  MovieManifest m;
  m.directory = directory;
  TomlReader r(source, nullptr);
  r.CheckKeys(root, "", {"movie", "tile"});
  const toml::table* movie = Section(r, root, "movie");
  if (!movie) {
    if (r.errors().empty()) r.Error(&root, "movie", "the [movie] table is missing");
    return Status::InvalidArgument(JoinLines(r.errors()));
  }
  r.CheckKeys(*movie, "movie",
              {"format", "version", "title", "columns", "rows", "tile_width", "tile_height",
               "bezel_x", "bezel_y", "pixel_format", "fps", "frames", "frame_stride"});
  std::string format, pixel_format;
  int64_t version = 0;
  r.String(*movie, "movie", "format", &format);
  r.Int(*movie, "movie", "version", 0, 1 << 20, &version);
  r.String(*movie, "movie", "title", &m.title);
  r.Int(*movie, "movie", "columns", 1, kMaxLayoutSide, &m.layout.columns);
  r.Int(*movie, "movie", "rows", 1, kMaxLayoutSide, &m.layout.rows);
  r.Int(*movie, "movie", "tile_width", 1, kMaxTileDimension, &m.tile.width);
  r.Int(*movie, "movie", "tile_height", 1, kMaxTileDimension, &m.tile.height);
  r.Int(*movie, "movie", "bezel_x", 0, kMaxTileDimension, &m.bezel_x);
  r.Int(*movie, "movie", "bezel_y", 0, kMaxTileDimension, &m.bezel_y);
  r.String(*movie, "movie", "pixel_format", &pixel_format);
  r.Float(*movie, "movie", "fps", 0.001, 1000, &m.fps);
  r.Int(*movie, "movie", "frames", 1, int64_t{1} << 40, &m.frames);
  r.Int(*movie, "movie", "frame_stride", 1, int64_t{1} << 40, &m.frame_stride);
  if (format != kFormat)
    r.Error(movie, "movie.format", fmt::format("'{}' is not '{}'", format, kFormat));
  if (version != kVersion)
    r.Error(movie, "movie.version",
            fmt::format("version {} is not supported (this build reads {})", version, kVersion));
  if (pixel_format != "rgb24")
    r.Error(movie, "movie.pixel_format", fmt::format("'{}' is not rgb24", pixel_format));
  for (const char* key : {"columns", "rows", "tile_width", "tile_height", "frames", "frame_stride"})
    if (!movie->get(key)) r.Error(movie, fmt::format("movie.{}", key), "missing");
  if (!r.errors().empty()) return Status::InvalidArgument(JoinLines(r.errors()));

  if (m.frame_stride < m.tile.frame_bytes() || m.frame_stride % kStoreAlignment != 0) {
    r.Error(movie->get("frame_stride"), "movie.frame_stride",
            fmt::format("{} is not a multiple of {} of at least the frame size {}", m.frame_stride,
                        kStoreAlignment, m.tile.frame_bytes()));
  }
  m.tile_files.assign(m.layout.tile_count(), "");
  TableArray(r, root, "tile", [&](const toml::table& t, const std::string& path) {
    r.CheckKeys(t, path, {"row", "column", "file"});
    TileId id{~0u, ~0u};
    std::string file;
    r.Int(t, path, "row", 0, kMaxLayoutSide, &id.row);
    r.Int(t, path, "column", 0, kMaxLayoutSide, &id.column);
    r.String(t, path, "file", &file);
    if (id.row >= m.layout.rows || id.column >= m.layout.columns) {
      return r.Error(&t, path,
                     fmt::format("row/column outside the {} layout", m.layout.ToString()));
    }
    if (file.empty()) return r.Error(&t, path + ".file", "missing");
    std::string& slot = m.tile_files[id.Index(m.layout)];
    if (!slot.empty()) return r.Error(&t, path, fmt::format("tile {} is listed twice", id.Name()));
    slot = file;
  });
  for (uint32_t t = 0; t < m.tile_files.size() && r.errors().empty(); ++t) {
    if (m.tile_files[t].empty())
      r.Error(&root, "tile",
              fmt::format("no [[tile]] entry for {}", TileId::FromIndex(t, m.layout).Name()));
  }
  if (!r.errors().empty()) return Status::InvalidArgument(JoinLines(r.errors()));
  return m;
}

Result<MovieManifest> OpenTileStore(const std::string& directory, bool check_files) {
  const std::string path = (fs::path(directory) / kManifestName).string();
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::NotFound(fmt::format("{}: no tile store here ({}); make one with wallcut",
                                        directory, std::strerror(errno)));
  }
  std::stringstream text;
  text << in.rdbuf();
  auto m = ParseManifest(text.str(), directory, path);
  if (!m.ok() || !check_files) return m;
  const uint64_t expected = m->frames * m->frame_stride;
  for (uint32_t t = 0; t < m->tile_files.size(); ++t) {
    const std::string tile_path = m->TilePath(t);
    struct stat st;
    if (stat(tile_path.c_str(), &st) != 0)
      return Status::IoError(
          fmt::format("{}: tile {}", path, TileId::FromIndex(t, m->layout).Name()) + ": " +
              tile_path,
          errno);
    if (static_cast<uint64_t>(st.st_size) != expected) {
      return Status::InvalidArgument(fmt::format(
          "{}: tile {}: {} has {} bytes, expected {} ({} frames x {} bytes): truncated or not this "
          "movie's file",
          path, TileId::FromIndex(t, m->layout).Name(), tile_path, st.st_size, expected, m->frames,
          m->frame_stride));
    }
  }
  return m;
}

Status CheckManifestMatchesWall(const MovieManifest& m, const WallSettings& wall) {
  if (m.layout != wall.layout || m.tile != wall.tile) {
    return Status::InvalidArgument(
        fmt::format("{}/{}: the movie is {} tiles of {}x{}, but the wall is {} tiles of {}x{}",
                    m.directory, kManifestName, m.layout.ToString(), m.tile.width, m.tile.height,
                    wall.layout.ToString(), wall.tile.width, wall.tile.height));
  }
  return Status::Ok();
}

}  // namespace tilestream
