#include "common/store/movie_library.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/control/movie_listing.h"
#include "tests/support/temp_dir.h"

namespace tilestream {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

constexpr TileGeometry kTile{64, 40};

WallSettings Wall() {
  WallSettings w;
  w.layout = {2, 1};
  w.tile = kTile;
  w.fps = 25;
  return w;
}

// A store of `frames` frames of `layout` at DIR/name, its tile files of the
// size they must have (their bytes are not read).
void MakeMovie(const std::filesystem::path& dir, const std::string& name, Layout layout,
               uint64_t frames = 50) {
  MovieManifest m;
  m.title = "the movie " + name;
  m.layout = layout;
  m.tile = kTile;
  m.fps = 25;
  m.frames = frames;
  m.frame_stride = FrameStride(kTile);
  const auto at = dir / name;
  std::filesystem::create_directories(at);
  for (uint32_t t = 0; t < layout.tile_count(); ++t) {
    m.tile_files.push_back(TileFileName(TileId::FromIndex(t, layout)));
    { std::ofstream create(at / m.tile_files.back()); }
    std::filesystem::resize_file(at / m.tile_files.back(), frames * m.frame_stride);
  }
  std::ofstream(at / kManifestName) << ManifestToToml(m);
}

const LibraryMovie& Named(const Library& l, const std::string& name) {
  for (const LibraryMovie& m : l.movies)
    if (m.name == name) return m;
  throw std::runtime_error("no movie " + name);
}

TEST(MovieLibrary, ListsEachMovieByNameAndSaysWhyOneDoesNotFit) {
  TempDir dir;
  MakeMovie(dir.path(), "b-fits", {2, 1});
  MakeMovie(dir.path(), "a-other-layout", {3, 1});
  MakeMovie(dir.path(), "c-truncated", {2, 1});
  std::filesystem::resize_file(std::filesystem::path(dir.path()) / "c-truncated" / "tile_r0_c1.rgb",
                               100);
  MakeMovie(dir.path(), "d-tile-gone", {2, 1});
  std::filesystem::remove(std::filesystem::path(dir.path()) / "d-tile-gone" / "tile_r0_c0.rgb");
  std::filesystem::create_directories(std::filesystem::path(dir.path()) / "e-broken");
  std::ofstream(std::filesystem::path(dir.path()) / "e-broken" / kManifestName)
      << "[movie\nlayout = ";
  std::filesystem::create_directories(std::filesystem::path(dir.path()) /
                                      "not-a-movie");  // no movie.toml
  std::ofstream(std::filesystem::path(dir.path()) / "a-file.txt") << "x";
  MakeMovie(dir.path(), ".hidden", {2, 1});

  auto library = ScanLibrary(dir.path(), Wall());
  ASSERT_TRUE(library.ok()) << library.status().message();
  std::vector<std::string> names;
  for (const auto& m : library->movies) names.push_back(m.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a-other-layout", "b-fits", "c-truncated",
                                             "d-tile-gone", "e-broken"}));
  const LibraryMovie& fits = Named(*library, "b-fits");
  EXPECT_EQ(fits.problem, "");
  ASSERT_TRUE(fits.manifest);
  EXPECT_EQ(fits.manifest->frames, 50u);
  EXPECT_EQ(fits.bytes, 2 * 50 * FrameStride(kTile));
  EXPECT_THAT(Named(*library, "a-other-layout").problem,
              HasSubstr("cut for 3x1 tiles of 64x40; the wall is 2x1 tiles of 64x40"));
  EXPECT_THAT(Named(*library, "c-truncated").problem, HasSubstr("tile r0c1: 100 bytes"));
  EXPECT_THAT(Named(*library, "d-tile-gone").problem, HasSubstr("tile r0c0: no file"));
  EXPECT_FALSE(Named(*library, "e-broken").manifest);
  EXPECT_THAT(Named(*library, "e-broken").problem, HasSubstr("movie.toml"));
  EXPECT_FALSE(library->truncated);
}

// On a wall over several servers only this server's tiles are looked for.
TEST(MovieLibrary, OnlyTheTilesHeldHereAreLookedFor) {
  TempDir dir;
  MakeMovie(dir.path(), "half", {2, 1});
  std::filesystem::remove(std::filesystem::path(dir.path()) / "half" / "tile_r0_c1.rgb");
  auto here = ScanLibrary(dir.path(), Wall(), [](uint32_t tile) { return tile == 0; });
  ASSERT_TRUE(here.ok());
  EXPECT_EQ(here->movies.at(0).problem, "");
  EXPECT_EQ(here->movies.at(0).bytes, 50 * FrameStride(kTile));
}

TEST(MovieLibrary, OneMovieIsLookedUpByNameAndAnotherRateDoesNotFit) {
  TempDir dir;
  MakeMovie(dir.path(), "fits", {2, 1});
  EXPECT_EQ(LookUpMovie(dir.path(), "fits", Wall()).problem, "");
  EXPECT_THAT(LookUpMovie(dir.path(), "nope", Wall()).problem,
              HasSubstr("no movie nope in the library"));
  WallSettings faster = Wall();
  faster.fps = 60;
  EXPECT_EQ(LookUpMovie(dir.path(), "fits", faster).problem,
            "cut at 25 fps; the wall plays 60 fps");
}

TEST(MovieLibrary, AMissingLibraryIsAnError) {
  auto library = ScanLibrary("/nonexistent/library", Wall());
  ASSERT_FALSE(library.ok());
  EXPECT_THAT(library.status().message(), HasSubstr("movie library /nonexistent/library"));
}

TEST(MovieLibrary, AtMostTheLimitIsListedAndTheListingSaysSo) {
  TempDir dir;
  for (size_t i = 0; i <= kMaxLibraryMovies; ++i) {
    std::filesystem::create_directories(std::filesystem::path(dir.path()) / std::to_string(i));
    std::ofstream(std::filesystem::path(dir.path()) / std::to_string(i) / kManifestName) << "";
  }
  auto library = ScanLibrary(dir.path(), Wall());
  ASSERT_TRUE(library.ok());
  EXPECT_EQ(library->movies.size(), kMaxLibraryMovies);
  EXPECT_TRUE(library->truncated);
}

// What `movies` says: every field of a movie that fits, the problem of one
// that does not, and nothing made up for one whose manifest is unreadable.
TEST(MovieListing, SaysEachMoviesFieldsAndWhetherItFits) {
  TempDir dir;
  MakeMovie(dir.path(), "fits", {2, 1}, 75);
  MakeMovie(dir.path(), "wide", {3, 1});
  std::filesystem::create_directories(std::filesystem::path(dir.path()) / "broken");
  std::ofstream(std::filesystem::path(dir.path()) / "broken" / kManifestName) << "frames = -1\n";
  const nlohmann::json j = MovieListing(dir.path(), *ScanLibrary(dir.path(), Wall()));
  EXPECT_EQ(j["library"], dir.path());
  ASSERT_EQ(j["movies"].size(), 3u);
  const nlohmann::json& broken = j["movies"][0];
  EXPECT_EQ(broken["name"], "broken");
  EXPECT_EQ(broken["fits"], false);
  EXPECT_FALSE(broken.contains("frames"));
  const nlohmann::json& fits = j["movies"][1];
  EXPECT_EQ(fits["title"], "the movie fits");
  EXPECT_EQ(fits["layout"], "2x1");
  EXPECT_EQ(fits["tile"], "64x40");
  EXPECT_EQ(fits["frames"], 75);
  EXPECT_EQ(fits["fps"], 25.0);
  EXPECT_EQ(fits["duration_s"], 3.0);
  EXPECT_EQ(fits["bytes"], 2 * 75 * FrameStride(kTile));
  EXPECT_EQ(fits["fits"], true);
  EXPECT_FALSE(fits.contains("problem"));
  EXPECT_EQ(j["movies"][2]["fits"], false);
  EXPECT_THAT(j["movies"][2]["problem"].get<std::string>(), HasSubstr("cut for 3x1"));
}

}  // namespace
}  // namespace tilestream
