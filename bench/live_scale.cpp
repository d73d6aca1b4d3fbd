// What a live source costs per picture (issue 44; docs/live.md): the
// conversion of a 1920x1080 YCbCr 4:2:2 picture to RGB (once per picture,
// on the streamer's converting thread) and one tile's region of it scaled
// onto the reference wall's canvas (per tile and picture, on its tile
// rank's sending thread), against a memcpy of that tile measured in the
// same run. Prints milliseconds per picture and the ratio to the memcpy.
//   live_scale [--pictures N]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "common/image/scaler.h"
#include "common/live/to_rgb.h"
#include "common/wall/wall_config.h"

namespace {

using tilestream::Fit;

double MsPerRun(int runs, const std::function<void()>& f) {
  f();  // pages faulted in, caches warm
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) f();
  const std::chrono::duration<double, std::milli> d = std::chrono::steady_clock::now() - start;
  return d.count() / runs;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 20;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--pictures" && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else {
      std::printf(
          "usage: live_scale [--pictures N]  (default 20)\n"
          "Milliseconds per picture of a live source's conversion and scaling onto the "
          "reference wall's tiles, against a memcpy of a tile.\n");
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  tilestream::WallSettings wall;  // the reference wall: 5x3 of 2560x1600
  wall.layout = {5, 3};
  wall.tile = {2560, 1600};
  const uint32_t w = 1920, h = 1080;
  const tilestream::TileGeometry source{w, h, tilestream::Sampling::kYCbCr422_10};
  std::vector<std::byte> pgroups(source.frame_bytes(), std::byte{0x80});
  std::vector<std::byte> picture(size_t{w} * h * 3), tile(wall.tile.frame_bytes()),
      copy(wall.tile.frame_bytes());
  const tilestream::PixelOrigin o = tilestream::TileOrigin(wall, 7);  // the middle tile
  const tilestream::RegionScaler scaler(w, h, wall.source_width(), wall.source_height(),
                                        {o.x, o.y, wall.tile.width, wall.tile.height}, Fit::kBars);
  const double memcpy_ms =
      MsPerRun(runs, [&] { std::memcpy(copy.data(), tile.data(), tile.size()); });
  const double convert_ms = MsPerRun(runs, [&] {
    tilestream::PictureToRgb(pgroups.data(), source, tilestream::Colorimetry::kBt709,
                             picture.data());
  });
  const double scale_ms = MsPerRun(runs, [&] { scaler.Scale(picture.data(), tile.data()); });
  // A source of the wall's own size (bezels included): its tile cut out.
  std::vector<std::byte> canvas(size_t{wall.source_width()} * wall.source_height() * 3);
  const tilestream::RegionScaler cutter(wall.source_width(), wall.source_height(),
                                        wall.source_width(), wall.source_height(),
                                        {o.x, o.y, wall.tile.width, wall.tile.height}, Fit::kBars);
  const double cut_ms = MsPerRun(runs, [&] { cutter.Scale(canvas.data(), tile.data()); });
  std::printf("memcpy of a 2560x1600 tile (reference): %.2f ms\n", memcpy_ms);
  std::printf("1920x1080 YCbCr 4:2:2 10-bit to RGB:     %.2f ms (%.1fx the reference)\n",
              convert_ms, convert_ms / memcpy_ms);
  std::printf(
      "its region scaled to a 2560x1600 tile:   %.2f ms (%.1fx the reference; %.0f "
      "pictures a second per core)\n",
      scale_ms, scale_ms / memcpy_ms, 1000 / scale_ms);
  std::printf("a tile cut from a picture of the wall's size: %.2f ms (%.1fx the reference)\n",
              cut_ms, cut_ms / memcpy_ms);
  return 0;
}
