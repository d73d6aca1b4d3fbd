#include "tools/movie_cutter.h"

#include <unistd.h>

#include <algorithm>
#include <vector>

#include "tools/progress.h"
#include "tools/wall_cutter.h"

namespace tilestream {

Result<MovieManifest> CutMovie(FrameSource& source, const CutOptions& o) {
  TileStoreWriter::Options wo;
  wo.directory = o.out_dir;
  wo.title = o.title;
  wo.layout = o.wall.layout;
  wo.tile = o.wall.tile;
  wo.bezel_x = o.wall.bezel_x;
  wo.bezel_y = o.wall.bezel_y;
  wo.fps = o.wall.fps;
  wo.spread = o.spread;
  wo.overwrite = o.overwrite;
  auto writer = TileStoreWriter::Create(wo);
  if (!writer.ok()) return writer.status();

  std::vector<std::byte> frame(size_t{o.wall.source_width()} * o.wall.source_height() * 3);
  std::vector<std::byte> tile(o.wall.tile.frame_bytes());
  uint64_t total = source.expected_frames();
  if (o.max_frames) total = total ? std::min(total, o.max_frames) : o.max_frames;
  ProgressBar bar("cutting", total, "frames", stderr, o.progress && isatty(STDERR_FILENO));
  uint64_t frames = 0;
  while (o.max_frames == 0 || frames < o.max_frames) {
    if (o.stop && o.stop->load())
      return Status::Internal("interrupted; the partial store was removed");
    auto more = source.Next(frame);
    if (!more.ok()) return more.status();  // ~TileStoreWriter removes the partial store
    if (!*more) break;
    for (uint32_t t = 0; t < o.wall.layout.tile_count(); ++t) {
      CutTile(o.wall, frame, t, tile);
      TS_RETURN_IF_ERROR(writer->AppendFrame(t, tile));
    }
    ++frames;
    bar.Update(frames, writer->bytes_written());
  }
  if (frames == 0) return Status::InvalidArgument("the source has no frames");
  TS_RETURN_IF_ERROR(writer->Finish());
  if (o.progress) bar.Finish(frames, writer->bytes_written());
  return writer->manifest();
}

}  // namespace tilestream
