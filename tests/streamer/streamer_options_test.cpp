#include "streamer/streamer_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/temp_dir.h"
#include "tools/wallcut/frame_source.h"
#include "tools/wallcut/movie_cutter.h"

namespace tilestream {
namespace {

using ::testing::HasSubstr;

class ResolveWallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WallSettings w;
    w.layout = {2, 2};
    w.tile = {48, 32};
    w.fps = 24;
    auto source = MakeSyntheticSource(w, 3, 1, false);
    CutOptions o;
    o.wall = w;
    o.out_dir = dir_ / "movie";
    o.progress = false;
    ASSERT_TRUE(CutMovie(**source, o).ok());
  }
  testing::TempDir dir_;
};

TEST_F(ResolveWallTest, WithoutConfigTheMovieGivesTileSizeAndFps) {
  StreamerOptions o;
  o.movie_dir = dir_ / "movie";
  auto w = ResolveWall(o);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->config.wall.layout, (Layout{2, 2}));
  EXPECT_EQ(w->config.wall.tile, (TileGeometry{48, 32}));
  EXPECT_EQ(w->config.wall.fps, 24);
  EXPECT_EQ(w->config.routes.size(), 4u);
}

TEST_F(ResolveWallTest, FlagsOverrideTheConfig) {
  const std::string config = dir_ / "wall.toml";
  std::ofstream(config)
      << "[wall]\ncolumns = 2\nrows = 2\ntile_width = 48\ntile_height = 32\nfps = 24\n";
  StreamerOptions o;
  o.config_path = config;
  o.movie_dir = dir_ / "movie";
  o.fps = 50;
  o.mtu = 1500;
  o.pacing = "off";
  o.port_base = 40000;
  auto w = ResolveWall(o);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->config.wall.fps, 50);
  EXPECT_EQ(w->config.stream.mtu, 1500u);
  EXPECT_FALSE(w->config.stream.pacing);
  EXPECT_EQ(w->config.routes[3].port, 40003);
}

TEST_F(ResolveWallTest, RefusesAMovieOfAnotherLayout) {
  StreamerOptions o;
  o.movie_dir = dir_ / "movie";
  o.layout = "5x3";
  auto w = ResolveWall(o);
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.status().message(),
              HasSubstr("the movie is 2x2 tiles of 48x32, but the wall is 5x3"));
}

TEST_F(ResolveWallTest, MemoryBenchmarkNeedsNoMovie) {
  StreamerOptions o;
  o.bench = true;
  o.source = "memory";
  o.layout = "3x1";
  auto w = ResolveWall(o);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_FALSE(w->movie.has_value());
  EXPECT_EQ(w->config.tile_count(), 3u);
}

TEST_F(ResolveWallTest, AMovieIsNamedInTheLibraryAndALibraryAloneStartsWithoutOne) {
  StreamerOptions o;
  o.library_dir = dir_.path();
  o.movie_dir = "movie";  // dir_/movie, by its name in the library
  auto w = ResolveWall(o);
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_TRUE(w->movie);
  EXPECT_EQ(w->movie->directory, dir_ / "movie");
  o.movie_dir.clear();
  o.layout = "2x2";
  w = ResolveWall(o);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_FALSE(w->movie) << "black until a load";
  o.library_dir.clear();
  EXPECT_THAT(ResolveWall(o).status().message(), HasSubstr("--movie DIR is required"));
}

// --movie NAME of a live source: no tile store, loaded once the wall is up;
// a movie of the library of the same name is the movie.
TEST_F(ResolveWallTest, AMovieNamedAsALiveSourceIsLoadedAtTheStart) {
  StreamerOptions o;
  o.layout = "2x2";
  o.live = {"cam=" + (dir_ / "cam.sdp")};
  o.movie_dir = "cam";
  auto w = ResolveWall(o);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_FALSE(w->movie);
  EXPECT_EQ(w->live_movie, "cam");
  o.live = {"movie=" + (dir_ / "cam.sdp")};
  o.library_dir = dir_.path();
  o.movie_dir = "movie";
  w = ResolveWall(o);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_TRUE(w->movie);
  EXPECT_EQ(w->live_movie, "");
}

TEST(StreamerFlags, RejectsBadValues) {
  StreamerOptions o;
  const char* argv[] = {"streamer", "--pacing", "maybe"};
  EXPECT_EQ(ParseStreamerFlags(3, const_cast<char**>(argv), false, &o), 2);
  const char* ok[] = {"streamer", "--bench", "--source", "memory", "--duration", "3"};
  EXPECT_EQ(ParseStreamerFlags(6, const_cast<char**>(ok), false, &o), std::nullopt);
  EXPECT_TRUE(o.bench);
  EXPECT_EQ(o.duration_s, 3);
}

}  // namespace
}  // namespace tilestream
