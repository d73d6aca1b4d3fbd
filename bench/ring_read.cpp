// The read rate of one tile's read-ahead ring alone: the streamer's own
// DiskFrameRing (O_DIRECT into huge-page buffers, a reader thread) with a
// consumer that takes each frame and gives it back at once, so nothing but
// the disk and the ring limits the rate. bench/streamer_bench.sh disk holds
// it to udpceil's disk ceiling; the streamer's disk-to-network run beside it
// shows the same reader with the sender attached.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "common/base/clock.h"
#include "common/base/guarded_main.h"
#include "common/store/frame_ring.h"
#include "common/store/tile_store.h"

namespace {

int Run(int argc, char** argv) {
  using namespace tilestream;
  CLI::App app{
      "Read rate of one tile's read-ahead ring (the streamer's reader without its sender)"};
  std::string movie_dir;
  uint32_t tile = 0, slots = 4;
  double seconds = 5;
  app.add_option("--movie", movie_dir, "Tile store directory")->required();
  app.add_option("--tile", tile, "Tile index");
  app.add_option("--ring-frames", slots, "Buffers in the ring (the streamer's default: 4)")
      ->check(CLI::Range(3, 64));
  app.add_option("--seconds", seconds, "How long to read (the movie loops)");
  CLI11_PARSE(app, argc, argv);
  auto movie = OpenTileStore(movie_dir);
  if (!movie.ok()) {
    std::fprintf(stderr, "ring_read: %s\n", movie.status().message().c_str());
    return 2;
  }
  auto ring = DiskFrameRing::Open(*movie, tile, slots);
  if (!ring.ok()) {
    std::fprintf(stderr, "ring_read: %s\n", ring.status().message().c_str());
    return 2;
  }
  const int64_t start = MonotonicNs(), end = start + static_cast<int64_t>(seconds * 1e9);
  uint64_t frames = 0;
  while (MonotonicNs() < end) {
    if (!(*ring)->Acquire(frames % movie->frames, end + 1'000'000'000)) break;
    (*ring)->Release();
    ++frames;
  }
  const double elapsed = (MonotonicNs() - start) / 1e9;
  if ((*ring)->failed()) {
    std::fprintf(stderr, "ring_read: %s\n", (*ring)->error().c_str());
    return 1;
  }
  std::printf("RING frames=%llu seconds=%.3f rate=%.1f MB/s\n",
              static_cast<unsigned long long>(frames), elapsed,
              frames * static_cast<double>(movie->frame_stride) / elapsed / 1e6);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tilestream::GuardedMain("ring_read", [&] { return Run(argc, argv); });
}
