// The movie cutter: the cut loop through its library, and the wallcut
// program as a user runs it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/base/aligned_buffer.h"
#include "common/image/ppm.h"
#include "common/image/scaler.h"
#include "common/image/ycbcr.h"
#include "common/store/tile_store.h"
#include "tests/support/built_paths.h"
#include "tests/support/packet_builder.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"
#include "tests/support/two_servers.h"
#include "tests/support/wait_for.h"
#include "tools/wallcut/frame_source.h"
#include "tools/wallcut/movie_cutter.h"
#include "tools/wallcut/wall_cutter.h"

namespace tilestream {
namespace {

namespace fs = std::filesystem;
using testing::FileText;
using ::testing::HasSubstr;
using testing::PatternFrame;
using testing::ProcessResult;
using testing::Shell;
using testing::TempDir;

WallSettings SmallWall(uint32_t bezel_x, uint32_t bezel_y) {
  WallSettings w;
  w.layout = {3, 2};
  w.tile = {21, 13};
  w.bezel_x = bezel_x;
  w.bezel_y = bezel_y;
  w.fps = 25;
  return w;
}

// Reads every frame of every tile and compares it with the cut of `frames`.
void ExpectStoreHolds(const std::string& dir, const WallSettings& wall,
                      const std::vector<std::vector<std::byte>>& frames) {
  auto m = OpenTileStore(dir);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->frames, frames.size());
  EXPECT_EQ(m->layout, wall.layout);
  EXPECT_EQ(m->tile, wall.tile);
  auto buffer = AlignedBuffer::Allocate(m->frame_stride);
  std::vector<std::byte> expected(wall.tile.frame_bytes());
  for (uint32_t t = 0; t < wall.layout.tile_count(); ++t) {
    auto r = TileReader::Open(*m, t);
    ASSERT_TRUE(r.ok()) << r.status().message();
    for (uint64_t f = 0; f < frames.size(); ++f) {
      ASSERT_TRUE(r->ReadFrame(f, buffer->span()).ok());
      CutTile(wall, frames[f], t, expected);
      ASSERT_TRUE(std::equal(expected.begin(), expected.end(), buffer->data()))
          << "tile " << t << " frame " << f;
    }
  }
}

std::vector<std::vector<std::byte>> WriteFrames(const TempDir& dir, const WallSettings& wall, int n,
                                                std::vector<std::string>* ppm_paths) {
  std::vector<std::vector<std::byte>> frames;
  for (int f = 0; f < n; ++f) {
    frames.push_back(PatternFrame({wall.source_width(), wall.source_height()}, 100 + f));
    const std::string path = dir / ("frame" + std::to_string(f) + ".ppm");
    EXPECT_TRUE(WritePpm(path, wall.source_width(), wall.source_height(), frames.back()).ok());
    ppm_paths->push_back(path);
  }
  return frames;
}

// Cuts three known PPM frames of a 3x2 wall and checks every tile's pixels.
void CutKnownWall(uint32_t bezel_x, uint32_t bezel_y) {
  TempDir dir;
  const WallSettings wall = SmallWall(bezel_x, bezel_y);
  std::vector<std::string> paths;
  const auto frames = WriteFrames(dir, wall, 3, &paths);
  auto source = MakePpmSource(paths, wall);
  CutOptions o;
  o.wall = wall;
  o.out_dir = dir / "store";
  o.progress = false;
  ASSERT_TRUE(CutMovie(*source, o).ok());
  ExpectStoreHolds(dir / "store", wall, frames);
  EXPECT_EQ(OpenTileStore(dir / "store")->bezel_x, bezel_x);
}

TEST(CutMovie, CutsAKnownWallIntoTilesWithoutBezels) { CutKnownWall(0, 0); }

TEST(CutMovie, CutsAKnownWallIntoTilesWithBezels) { CutKnownWall(4, 2); }

TEST(CutMovie, InterruptionLeavesNoStore) {
  TempDir dir;
  const WallSettings wall = SmallWall(0, 0);
  auto source = MakeSyntheticSource(wall, 5, 1, true);
  ASSERT_TRUE(source.ok());
  std::atomic<bool> stop{true};
  CutOptions o;
  o.wall = wall;
  o.out_dir = dir / "store";
  o.progress = false;
  o.stop = &stop;
  EXPECT_FALSE(CutMovie(**source, o).ok());
  EXPECT_TRUE(fs::is_empty(dir / "store"));
}

// --- the program ----------------------------------------------------------------

const std::string kWallcut = WALLCUT_PATH;

TEST(Wallcut, SyntheticFiveByThreeStoreReadsBackFrameExact) {
  TempDir dir;
  const ProcessResult r = Shell(
      kWallcut + " --layout 5x3 --tile 64x40 --bezel 6x4 --synthetic --frames 4 --seed 3 --out " +
          (dir / "movie"),
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  WallSettings wall;
  wall.layout = {5, 3};
  wall.tile = {64, 40};
  wall.bezel_x = 6;
  wall.bezel_y = 4;
  auto source = MakeSyntheticSource(wall, 4, 3, true);
  ASSERT_TRUE(source.ok());
  std::vector<std::vector<std::byte>> frames(
      4, std::vector<std::byte>(size_t{wall.source_width()} * wall.source_height() * 3));
  for (auto& f : frames) ASSERT_TRUE(*(*source)->Next(f));
  ExpectStoreHolds(dir / "movie", wall, frames);
}

TEST(Wallcut, ReadsRawFramesFromStdin) {
  TempDir dir;
  const WallSettings wall = SmallWall(2, 1);
  std::ofstream raw(dir / "in.rgb", std::ios::binary);
  std::vector<std::vector<std::byte>> frames;
  for (int f = 0; f < 3; ++f) {
    frames.push_back(PatternFrame({wall.source_width(), wall.source_height()}, 7 + f));
    raw.write(reinterpret_cast<const char*>(frames.back().data()),
              static_cast<std::streamsize>(frames.back().size()));
  }
  raw.close();
  const ProcessResult r = Shell(kWallcut + " --layout 3x2 --tile 21x13 --bezel 2x1 --stdin --out " +
                                    (dir / "movie") + " < " + (dir / "in.rgb"),
                                dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ExpectStoreHolds(dir / "movie", wall, frames);
}

// Frames of another size and pixel format (YCbCr 4:2:2, as ffmpeg's
// uyvy422 or a live source's RFC 4175 payload) are converted and scaled
// onto the wall, bezels included, as common/image's converter and scaler
// (their own tests hold them to the standards' formulas) do: aspect kept
// with bars, or filling it.
TEST(Wallcut, ScalesFramesOfAnotherSizeAndPixelFormatOntoTheWall) {
  const WallSettings wall = SmallWall(2, 1);  // 67x27 with its bezels
  constexpr uint32_t kW = 32, kH = 12;
  for (const char* fit : {"bars", "fill"}) {
    TempDir dir;
    std::ofstream raw(dir / "in.uyvy", std::ios::binary);
    std::vector<std::vector<std::byte>> frames;
    RegionScaler scaler(kW, kH, wall.source_width(), wall.source_height(),
                        {0, 0, wall.source_width(), wall.source_height()}, *ParseFit(fit));
    for (int f = 0; f < 2; ++f) {
      const std::vector<std::byte> yuv = PatternFrame({kW, kH}, 3 + f);  // cut to 2 octets a pixel
      std::vector<std::byte> yuv4(size_t{kW} * kH * 2);
      std::copy_n(yuv.begin(), yuv4.size(), yuv4.begin());
      raw.write(reinterpret_cast<const char*>(yuv4.data()),
                static_cast<std::streamsize>(yuv4.size()));
      std::vector<std::byte> rgb(size_t{kW} * kH * 3);
      for (uint32_t y = 0; y < kH; ++y)
        YCbCr422LineToRgb(yuv4.data() + y * kW * 2, kW, {}, rgb.data() + y * kW * 3);
      frames.emplace_back(size_t{wall.source_width()} * wall.source_height() * 3);
      scaler.Scale(rgb.data(), frames.back().data());
    }
    raw.close();
    const ProcessResult r = Shell(kWallcut + " --layout 3x2 --tile 21x13 --bezel 2x1 --stdin " +
                                      "--input-size 32x12 --pix-fmt uyvy422 --fit " + fit +
                                      " --out " + (dir / "movie") + " < " + (dir / "in.uyvy"),
                                  dir);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("32x12 uyvy422 frames scaled onto the wall's 67x27"));
    ExpectStoreHolds(dir / "movie", wall, frames);
  }
  TempDir dir;
  const ProcessResult odd =
      Shell(kWallcut + " --layout 3x2 --tile 21x13 --stdin --input-size " +
                "31x12 --pix-fmt uyvy422 --out " + (dir / "m") + " < /dev/null",
            dir);
  EXPECT_EQ(odd.exit_code, 1);
  EXPECT_THAT(odd.output, HasSubstr("an even number of pixels wide, not 31"));
}

TEST(Wallcut, ShortFrameOnStdinIsAnErrorAndLeavesNoStore) {
  TempDir dir;
  const WallSettings wall = SmallWall(0, 0);
  const size_t frame = size_t{wall.source_width()} * wall.source_height() * 3;
  std::ofstream(dir / "in.rgb", std::ios::binary) << std::string(frame + frame / 2, 'x');
  const ProcessResult r = Shell(kWallcut + " --layout 3x2 --tile 21x13 --stdin --out " +
                                    (dir / "movie") + " < " + (dir / "in.rgb"),
                                dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("stdin: frame 1 is short: 2457 of 4914 bytes"));
  EXPECT_TRUE(fs::is_empty(dir / "movie"));
}

TEST(Wallcut, WrongPpmSizeIsAnErrorAndLeavesNoStore) {
  TempDir dir;
  std::vector<std::byte> rgb(10 * 10 * 3);
  ASSERT_TRUE(WritePpm(dir / "small.ppm", 10, 10, rgb).ok());
  const ProcessResult r = Shell(
      kWallcut + " --layout 3x2 --tile 21x13 --out " + (dir / "movie") + " " + (dir / "small.ppm"),
      dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("small.ppm: the image is 10x10, the wall needs 63x26"));
  EXPECT_TRUE(fs::is_empty(dir / "movie"));
}

TEST(Wallcut, RefusesToOverwriteWithoutForce) {
  TempDir dir;
  const std::string cmd =
      kWallcut + " --layout 1x1 --tile 8x8 --synthetic --frames 2 -q --out " + (dir / "m");
  ASSERT_EQ(Shell(cmd, dir).exit_code, 0);
  const ProcessResult again = Shell(cmd, dir);
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_THAT(again.output, HasSubstr("already holds a movie"));
  EXPECT_EQ(Shell(cmd + " --force", dir).exit_code, 0);
}

TEST(Wallcut, NeedsExactlyOneSource) {
  TempDir dir;
  const ProcessResult r =
      Shell(kWallcut + " --synthetic --stdin --out " + (dir / "m") + " < /dev/null", dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("exactly one source"));
}

TEST(Wallcut, HelpDescribesEveryFlag) {
  TempDir dir;
  const ProcessResult r = Shell(kWallcut + " --help", dir);
  EXPECT_EQ(r.exit_code, 0);
  for (const char* flag : {"--config", "--layout", "--tile", "--bezel", "--synthetic", "--stdin",
                           "--input-size", "--pix-fmt", "--fit", "--spread", "--force"})
    EXPECT_THAT(r.output, HasSubstr(flag));
}

// A wall over two servers: OUT/stream1 and OUT/stream2, each with the
// movie's manifest and exactly its own tiles' files, byte for byte those of
// a one-directory cut of the same movie.
TEST(Wallcut, AWallOverTwoServersIsCutIntoOneDirectoryPerServer) {
  TempDir dir;
  std::ofstream(dir / "two.toml") << testing::kTwoServersToml;
  const WallConfig c = testing::TwoServers();
  const std::string cut = kWallcut + " --synthetic --frames 3 -q --config " + (dir / "two.toml");
  const ProcessResult r = Shell(cut + " --out " + (dir / "split"), dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const ProcessResult whole = Shell(
      kWallcut + " --synthetic --frames 3 -q --layout 4x2 --tile 64x32 --out " + (dir / "whole"),
      dir);
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  EXPECT_FALSE(fs::exists(dir / "split/movie.toml"));
  for (uint32_t s = 0; s < 2; ++s) {
    const fs::path part = fs::path(dir / "split") / c.servers[s].name;
    auto store = OpenTileStore(part, /*check_files=*/false);
    ASSERT_TRUE(store.ok()) << store.status().message();
    EXPECT_EQ(store->frames, 3u);
    for (uint32_t t = 0; t < c.tile_count(); ++t) {
      const std::string name = TileFileName(TileId::FromIndex(t, c.wall.layout));
      SCOPED_TRACE((part / name).string());
      ASSERT_EQ(fs::exists(part / name), c.routes[t].server == s);
      if (c.routes[t].server == s) {
        EXPECT_EQ(FileText(part / name), FileText(fs::path(dir / "whole") / name));
      }
    }
  }
}

// A disk that fills up mid-cut: a 1 MiB tmpfs, mounted when we may.
TEST(Wallcut, DiskFullIsAClearErrorAndLeavesNoStore) {
  TempDir dir;
  const std::string mnt = dir / "small";
  fs::create_directory(mnt);
  if (mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=1m") != 0)
    GTEST_SKIP() << "cannot mount a small tmpfs here (needs root)";
  struct Unmount {
    std::string path;
    ~Unmount() { umount(path.c_str()); }
  } unmount{mnt};
  const ProcessResult r = Shell(
      kWallcut + " --layout 2x2 --tile 320x200 --synthetic --frames 10 -q --out " + mnt + "/m",
      dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("No space left on device"));
  EXPECT_TRUE(fs::is_empty(mnt + "/m"));
}

}  // namespace
}  // namespace tilestream
