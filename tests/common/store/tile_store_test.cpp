#include "common/store/tile_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/base/aligned_buffer.h"
#include "tests/support/packet_builder.h"
#include "tests/support/temp_dir.h"

namespace tilestream {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::PatternFrame;
using testing::TempDir;

const Layout kLayout{2, 2};
const TileGeometry kTile{33, 17};  // odd: 1683 bytes, padded to 4096
constexpr uint64_t kFrames = 5;

uint32_t Seed(uint32_t tile, uint64_t frame) { return tile * 1000 + static_cast<uint32_t>(frame); }

TileStoreWriter::Options Options(const std::string& dir) {
  TileStoreWriter::Options o;
  o.directory = dir;
  o.title = "test \"movie\"";
  o.layout = kLayout;
  o.tile = kTile;
  o.fps = 25;
  return o;
}

Status WriteStore(const TileStoreWriter::Options& o) {
  auto w = TileStoreWriter::Create(o);
  if (!w.ok()) return w.status();
  for (uint64_t f = 0; f < kFrames; ++f)
    for (uint32_t t = 0; t < kLayout.tile_count(); ++t)
      TS_RETURN_IF_ERROR(w->AppendFrame(t, PatternFrame(kTile, Seed(t, f))));
  return w->Finish();
}

void ExpectFramesReadBack(const MovieManifest& m, bool direct) {
  auto buffer = AlignedBuffer::Allocate(m.frame_stride);
  ASSERT_TRUE(buffer.ok());
  for (uint32_t t = 0; t < m.layout.tile_count(); ++t) {
    auto r = TileReader::Open(m, t, direct);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_EQ(r->frames(), kFrames);
    for (uint64_t f = 0; f < kFrames; ++f) {
      ASSERT_TRUE(r->ReadFrame(f, buffer->span()).ok());
      const auto expected = PatternFrame(kTile, Seed(t, f));
      ASSERT_TRUE(std::equal(expected.begin(), expected.end(), buffer->data())) << t << "/" << f;
    }
  }
}

TEST(TileStore, FrameStrideIsPaddedTo4096) {
  EXPECT_EQ(FrameStride({33, 17}), 4096u);
  EXPECT_EQ(FrameStride({2560, 1600}), 12288000u);  // already a multiple of 4096
  EXPECT_EQ(FrameStride({640, 400}), 770048u);
}

TEST(TileStore, WritesAndReadsBackEveryFrameWithODirect) {
  TempDir dir;
  ASSERT_TRUE(WriteStore(Options(dir.path())).ok());
  auto m = OpenTileStore(dir.path());
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->title, "test \"movie\"");
  EXPECT_EQ(m->frames, kFrames);
  EXPECT_EQ(m->frame_stride, 4096u);
  EXPECT_EQ(fs::file_size(dir / "tile_r1_c0.rgb"), kFrames * 4096);
  auto r = TileReader::Open(*m, 0);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->direct());  // ext4/XFS take O_DIRECT
  ExpectFramesReadBack(*m, true);
}

TEST(TileStore, FallsBackToBufferedReadsWhereODirectIsRefused) {
  TempDir dir;
  ASSERT_TRUE(WriteStore(Options(dir.path())).ok());
  auto m = OpenTileStore(dir.path());
  ASSERT_TRUE(m.ok());
  auto r = TileReader::Open(*m, 0, true, {.refuse_direct = true});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->direct());
  auto buffer = AlignedBuffer::Allocate(m->frame_stride);
  ASSERT_TRUE(r->ReadFrame(4, buffer->span()).ok());
  const auto expected = PatternFrame(kTile, Seed(0, 4));
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), buffer->data()));
}

// tmpfs refuses O_DIRECT before Linux 6.6 and takes it after; either way
// the frames read back.
TEST(TileStore, ReadsFromTmpfs) {
  if (!fs::is_directory("/dev/shm")) GTEST_SKIP() << "no tmpfs at /dev/shm";
  TempDir dir("/dev/shm");
  ASSERT_TRUE(WriteStore(Options(dir.path())).ok());
  auto m = OpenTileStore(dir.path());
  ASSERT_TRUE(m.ok());
  ExpectFramesReadBack(*m, true);
}

TEST(TileStore, SpreadsTileFilesOverDirectories) {
  TempDir dir;
  TileStoreWriter::Options o = Options(dir / "movie");
  o.spread = {dir / "ssd0", dir / "ssd1"};
  ASSERT_TRUE(WriteStore(o).ok());
  EXPECT_TRUE(fs::exists(dir / "ssd0/tile_r0_c0.rgb"));
  EXPECT_TRUE(fs::exists(dir / "ssd1/tile_r0_c1.rgb"));
  EXPECT_TRUE(fs::exists(dir / "ssd0/tile_r1_c0.rgb"));
  auto m = OpenTileStore(dir / "movie");
  ASSERT_TRUE(m.ok()) << m.status().message();
  ExpectFramesReadBack(*m, true);
}

TEST(TileStore, RefusesAnExistingStoreUnlessOverwriting) {
  TempDir dir;
  ASSERT_TRUE(WriteStore(Options(dir.path())).ok());
  auto again = TileStoreWriter::Create(Options(dir.path()));
  ASSERT_FALSE(again.ok());
  EXPECT_THAT(again.status().message(), HasSubstr("already holds a movie"));
  TileStoreWriter::Options o = Options(dir.path());
  o.overwrite = true;
  EXPECT_TRUE(WriteStore(o).ok());
}

TEST(TileStore, AbortedWriteLeavesNothingThatLooksLikeAStore) {
  TempDir dir;
  {
    auto w = TileStoreWriter::Create(Options(dir.path()));
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->AppendFrame(0, PatternFrame(kTile, 1)).ok());
  }  // destroyed without Finish
  EXPECT_TRUE(fs::is_empty(dir.path()));
  EXPECT_FALSE(OpenTileStore(dir.path()).ok());
}

TEST(TileStore, FinishRefusesUnevenTiles) {
  TempDir dir;
  auto w = TileStoreWriter::Create(Options(dir.path()));
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(w->AppendFrame(0, PatternFrame(kTile, 1)).ok());
  EXPECT_FALSE(w->Finish().ok());
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(TileStore, RejectsTruncatedTileFile) {
  TempDir dir;
  ASSERT_TRUE(WriteStore(Options(dir.path())).ok());
  fs::resize_file(dir / "tile_r0_c1.rgb", 3 * 4096 + 100);
  auto m = OpenTileStore(dir.path());
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("tile r0c1: " + (dir / "tile_r0_c1.rgb") +
                                              " has 12388 bytes, expected 20480"));
}

TEST(TileStore, RejectsMissingTileFile) {
  TempDir dir;
  ASSERT_TRUE(WriteStore(Options(dir.path())).ok());
  fs::remove(dir / "tile_r1_c1.rgb");
  auto m = OpenTileStore(dir.path());
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("tile r1c1"));
}

TEST(TileStore, ReadReportsAFileTruncatedAfterOpen) {
  TempDir dir;
  ASSERT_TRUE(WriteStore(Options(dir.path())).ok());
  auto m = OpenTileStore(dir.path());
  ASSERT_TRUE(m.ok());
  auto r = TileReader::Open(*m, 0);
  ASSERT_TRUE(r.ok());
  fs::resize_file(dir / "tile_r0_c0.rgb", 2 * 4096);
  auto buffer = AlignedBuffer::Allocate(4096);
  ASSERT_TRUE(r->ReadFrame(1, buffer->span()).ok());
  const Status s = r->ReadFrame(3, buffer->span());
  EXPECT_THAT(s.message(), HasSubstr("truncated"));
}

TEST(TileStore, NoStoreIsAClearError) {
  TempDir dir;
  auto m = OpenTileStore(dir.path());
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("no tile store here"));
}

TEST(TileStore, ChecksTheMovieAgainstTheWall) {
  MovieManifest m;
  m.layout = {5, 3};
  m.tile = {640, 400};
  WallSettings wall;
  EXPECT_TRUE(CheckManifestMatchesWall(m, wall).ok());
  wall.layout = {2, 2};
  EXPECT_THAT(CheckManifestMatchesWall(m, wall).message(),
              HasSubstr("the movie is 5x3 tiles of 640x400, but the wall is 2x2 tiles of 640x400"));
}

// --- manifest parsing ---------------------------------------------------------

constexpr const char* kManifest = R"([movie]
format = "tilestream-tiles"
version = 1
columns = 1
rows = 1
tile_width = 64
tile_height = 64
pixel_format = "rgb24"
fps = 30
frames = 10
frame_stride = 12288

[[tile]]
row = 0
column = 0
file = "t.rgb"
)";

std::string ManifestError(const std::string& from, const std::string& to) {
  std::string text = kManifest;
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  auto m = ParseManifest(text, "/movie", "/movie/movie.toml");
  EXPECT_FALSE(m.ok()) << text;
  return m.ok() ? "" : m.status().message();
}

TEST(Manifest, RoundTripsThroughToml) {
  auto m = ParseManifest(kManifest, "/movie", "movie.toml");
  ASSERT_TRUE(m.ok()) << m.status().message();
  m->title = "a \\ b";
  auto again = ParseManifest(ManifestToToml(*m), "/movie", "movie.toml");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->title, "a \\ b");
  EXPECT_EQ(again->frames, 10u);
  EXPECT_EQ(again->TilePath(0), "/movie/t.rgb");
}

TEST(Manifest, RejectsOtherFormatsAndPixelFormats) {
  EXPECT_THAT(ManifestError("tilestream-tiles", "mp4"), HasSubstr("movie.format"));
  EXPECT_THAT(ManifestError("version = 1", "version = 2"), HasSubstr("version 2 is not supported"));
  EXPECT_THAT(ManifestError("rgb24", "yuv420"), HasSubstr("'yuv420' is not rgb24"));
}

TEST(Manifest, RejectsStrideThatIsNotAlignedOrTooSmall) {
  EXPECT_THAT(ManifestError("12288", "12000"), HasSubstr("movie.frame_stride"));
  EXPECT_THAT(ManifestError("12288", "8192"), HasSubstr("movie.frame_stride"));
}

TEST(Manifest, RejectsMissingKeysAndTiles) {
  EXPECT_THAT(ManifestError("frames = 10\n", ""), HasSubstr("movie.frames: missing"));
  EXPECT_THAT(ManifestError("columns = 1", "columns = 2"), HasSubstr("no [[tile]] entry for r0c1"));
  EXPECT_THAT(ManifestError("row = 0", "row = 5"), HasSubstr("outside the 1x1 layout"));
}

TEST(Manifest, RejectsTileListedTwice) {
  const std::string twice =
      std::string(kManifest) + "\n[[tile]]\nrow = 0\ncolumn = 0\nfile = \"u.rgb\"\n";
  auto m = ParseManifest(twice, "/movie", "movie.toml");
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("tile r0c0 is listed twice"));
}

TEST(Manifest, RejectsUnknownKeysWithTheirLine) {
  EXPECT_THAT(ManifestError("fps = 30", "fps = 30\nspeed = 2"),
              HasSubstr("/movie/movie.toml:10: movie.speed: unknown key"));
}

}  // namespace
}  // namespace tilestream
