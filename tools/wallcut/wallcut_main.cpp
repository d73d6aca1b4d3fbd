// wallcut: cuts a whole-wall movie into a tile store (docs/tile_store.md).
#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdio>

#include "common/base/guarded_main.h"
#include "common/base/log_flag.h"
#include "common/wall/layout.h"
#include "common/wall/wall_config.h"
#include "tools/wallcut/frame_source.h"
#include "tools/wallcut/movie_cutter.h"

namespace {

// Frames piped in: up to 16384 pixels a side (8K is 7680x4320).
constexpr uint32_t kMaxInputSide = 16384;

std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop = true; }

int Fail(const std::string& message) {
  spdlog::error("{}", message);
  return 1;
}

// The config's wall with --layout, --tile, --bezel and --fps applied.
tilestream::Result<tilestream::WallSettings> WallFromFlags(tilestream::WallSettings wall,
                                                           const std::string& layout,
                                                           const std::string& tile,
                                                           const std::string& bezel, double fps) {
  using namespace tilestream;
  if (!layout.empty()) {
    auto l = ParseLayout(layout);
    if (!l.ok()) return Status::InvalidArgument("--layout: " + l.status().message());
    wall.layout = *l;
  }
  if (!tile.empty()) {
    auto t = ParseSize(tile, "--tile", 1, kMaxTileDimension);
    if (!t.ok()) return t.status();
    wall.tile = {t->width, t->height};
  }
  if (!bezel.empty()) {
    auto b = ParseSize(bezel, "--bezel", 0, kMaxTileDimension);
    if (!b.ok()) return b.status();
    wall.bezel_x = b->width;
    wall.bezel_y = b->height;
  }
  if (fps > 0) wall.fps = fps;
  return wall;
}

// --stdin: raw frames of the wall's size as they are, or of another size
// or pixel format scaled onto it.
tilestream::Result<std::unique_ptr<tilestream::FrameSource>> StdinSource(
    const tilestream::WallSettings& wall, const std::string& input_size, const std::string& pix_fmt,
    const std::string& fit, bool quiet) {
  using namespace tilestream;
  RawFormat f{wall.source_width(), wall.source_height(), pix_fmt == "uyvy422", *ParseFit(fit)};
  if (!input_size.empty()) {
    auto size = ParseSize(input_size, "--input-size", 1, kMaxInputSide);
    if (!size.ok()) return size.status();
    f.width = size->width;
    f.height = size->height;
  }
  if (f.uyvy422 && f.width % 2 != 0)
    return Status::InvalidArgument(fmt::format(
        "--input-size: uyvy422 frames are an even number of pixels wide, not {}", f.width));
  if (!f.uyvy422 && f.width == wall.source_width() && f.height == wall.source_height())
    return MakeRawSource(STDIN_FILENO, "stdin", wall);
  if (!quiet)
    spdlog::info("{}x{} {} frames scaled onto the wall's {}x{} ({})", f.width, f.height, pix_fmt,
                 wall.source_width(), wall.source_height(),
                 fit == "bars" ? "aspect kept, black bars" : "stretched to fill");
  return MakeScaledRawSource(STDIN_FILENO, "stdin", wall, f);
}

int Run(int argc, char** argv) {
  using namespace tilestream;
  CLI::App app{
      "Cuts a whole-wall movie into a tile store: one file per tile, frames padded for O_DIRECT.\n"
      "The wall's source frame spans all tiles plus the bezels between them, whose pixels are "
      "dropped.\n\n"
      "Examples:\n"
      "  wallcut --config configs/demo-5x3.toml --synthetic --frames 300 --out movies/demo\n"
      "  ffmpeg -i in.mp4 -vf scale=3264:1232 -f rawvideo -pix_fmt rgb24 - | \\\n"
      "      wallcut --config configs/demo-5x3.toml --stdin --out movies/in\n"
      "  ffmpeg -i in.mp4 -f rawvideo -pix_fmt uyvy422 - | \\\n"
      "      wallcut --config configs/demo-5x3.toml --stdin --input-size 1920x1080 --pix-fmt "
      "uyvy422 --out movies/in\n"
      "  wallcut --layout 2x2 --tile 160x100 --out movies/t frame0001.ppm frame0002.ppm\n\n"
      "A wall over several servers ([[server]] in --config) is cut into OUT/SERVER for each: that\n"
      "server's tile files and the movie's manifest, to copy to its store.",
      "wallcut"};
  std::string config_path, layout, tile, bezel, out, title, input_size, pix_fmt = "rgb24",
                                                                        fit = "bars";
  double fps = 0;
  bool synthetic = false, from_stdin = false, no_stamp = false, force = false, quiet = false;
  uint64_t frames = 0, seed = 1;
  std::vector<std::string> spread, ppm_files;
  app.add_option("--config", config_path, "Wall config (TOML); flags below override it")
      ->check(CLI::ExistingFile);
  app.add_option("--layout", layout, "Tiles as COLUMNSxROWS (default 5x3)");
  app.add_option("--tile", tile, "Tile size in pixels, WxH (default 640x400)");
  app.add_option("--bezel", bezel, "Pixels hidden between tiles, XxY (default 0x0)");
  app.add_option("--fps", fps, "Frame rate recorded in the movie (default: the wall's)");
  app.add_option("--out", out, "Directory of the tile store to write")->required();
  app.add_option("--spread", spread,
                 "Directories (SSD mounts) to spread tile files over, round robin")
      ->delimiter(',');
  app.add_flag("--synthetic", synthetic, "Generate a cosmic-web movie instead of reading one");
  app.add_flag("--stdin", from_stdin, "Read raw whole-wall frames from standard input");
  app.add_option("--input-size", input_size,
                 "--stdin: the frames' size, WxH, scaled onto the wall (default: the wall's, "
                 "bezels included, cut as they are)");
  app.add_option("--pix-fmt", pix_fmt, "--stdin: rgb24, or uyvy422 (YCbCr 4:2:2, BT.709)")
      ->check(CLI::IsMember({"rgb24", "uyvy422"}));
  app.add_option("--fit", fit,
                 "--stdin of another size: bars (aspect kept, black bars) or fill (stretched)")
      ->check(CLI::IsMember({"bars", "fill"}));
  app.add_option("--frames", frames, "Frames to write (synthetic default 300; others: all)");
  app.add_option("--seed", seed, "Seed of the synthetic movie");
  app.add_flag("--no-stamp", no_stamp, "Synthetic: leave out the frame number on each tile");
  app.add_option("--title", title, "Title recorded in movie.toml");
  app.add_flag("--force", force, "Replace a movie already in --out");
  app.add_flag("-q,--quiet", quiet, "No progress bar or summary");
  app.add_option("ppm", ppm_files, "Whole-wall frames as binary PPM files, in order");
  std::string log_level = "info";
  AddLogLevelFlag(&app, &log_level);
  CLI11_PARSE(app, argc, argv);
  (void)SetUpLogging("wallcut", log_level);

  if (int(synthetic) + int(from_stdin) + int(!ppm_files.empty()) != 1)
    return Fail("give exactly one source: --synthetic, --stdin or PPM files (see --help)");

  WallConfig config = DefaultWallConfig({5, 3});
  if (!config_path.empty()) {
    auto loaded = LoadWallConfig(config_path);
    if (!loaded.ok()) return Fail(loaded.status().message());
    config = std::move(loaded).value();
  }
  auto flagged = WallFromFlags(config.wall, layout, tile, bezel, fps);
  if (!flagged.ok()) return Fail(flagged.status().message());
  const WallSettings wall = *flagged;

  std::unique_ptr<FrameSource> source;
  if (synthetic) {
    if (frames == 0) frames = 300;
    auto s = MakeSyntheticSource(wall, frames, seed, !no_stamp);
    if (!s.ok()) return Fail(s.status().message());
    source = std::move(s).value();
    if (title.empty()) title = fmt::format("cosmic web (synthetic, seed {})", seed);
  } else if (from_stdin) {
    if (isatty(STDIN_FILENO))
      return Fail("--stdin: standard input is a terminal; pipe raw frames in");
    auto s = StdinSource(wall, input_size, pix_fmt, fit, quiet);
    if (!s.ok()) return Fail(s.status().message());
    source = std::move(s).value();
  } else {
    source = MakePpmSource(ppm_files, wall);
  }

  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  CutOptions o;
  o.wall = wall;
  o.out_dir = out;
  o.parts = StoreParts(config, out);
  if (!o.parts.empty() && !(wall.layout == config.wall.layout))
    return Fail("--layout: the config's wall is over several servers; change its layout there");
  o.spread = spread;
  o.title = title;
  o.overwrite = force;
  o.max_frames = frames;
  o.progress = !quiet;
  o.stop = &g_stop;
  if (!quiet) {
    spdlog::info("{} tiles of {}x{} from {}x{} frames (bezels {}x{}) -> {}", wall.layout.ToString(),
                 wall.tile.width, wall.tile.height, wall.source_width(), wall.source_height(),
                 wall.bezel_x, wall.bezel_y, out);
  }
  auto m = CutMovie(*source, o);
  if (!m.ok()) return Fail(m.status().message());
  if (!quiet) {
    spdlog::info("wrote {} frames of {} tiles ({:.1f} MB) to {}", m->frames, m->layout.tile_count(),
                 m->frames * m->frame_stride * m->layout.tile_count() / 1e6, out);
    for (const StorePart& part : o.parts)
      spdlog::info("  {}: {} tiles and the manifest; copy it to its server's store", part.dir,
                   part.tiles.size());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tilestream::GuardedMain("wallcut", [&] { return Run(argc, argv); });
}
