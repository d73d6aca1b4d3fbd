#include "tools/wallcut/movie_cutter.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "tools/wallcut/progress.h"
#include "tools/wallcut/wall_cutter.h"

namespace tilestream {

std::vector<StorePart> StoreParts(const WallConfig& c, const std::string& out_dir) {
  if (!c.several_servers()) return {};
  std::vector<StorePart> parts;
  for (const Server& server : c.servers)
    parts.push_back({(std::filesystem::path(out_dir) / server.name).string(), {}});
  for (uint32_t t = 0; t < c.tile_count(); ++t) parts[c.routes[t].server].tiles.push_back(t);
  return parts;
}

namespace {

// A writer per part; all of them are aborted unless every one finishes.
Result<std::vector<TileStoreWriter>> CreateWriters(const CutOptions& o) {
  TileStoreWriter::Options wo;
  wo.title = o.title;
  wo.layout = o.wall.layout;
  wo.tile = o.wall.tile;
  wo.bezel_x = o.wall.bezel_x;
  wo.bezel_y = o.wall.bezel_y;
  wo.fps = o.wall.fps;
  wo.spread = o.spread;
  wo.overwrite = o.overwrite;
  std::vector<TileStoreWriter> writers;
  for (const StorePart& part :
       o.parts.empty() ? std::vector<StorePart>{{o.out_dir, {}}} : o.parts) {
    wo.directory = part.dir;
    wo.tiles = part.tiles;
    auto writer = TileStoreWriter::Create(wo);
    if (!writer.ok()) return writer.status();
    writers.push_back(std::move(writer).value());
  }
  return writers;
}

// Finishes every part; if one fails, the parts already finished lose their
// manifest, so that no store of a part of the movie is left looking whole.
Status FinishAll(std::vector<TileStoreWriter>& writers) {
  for (size_t i = 0; i < writers.size(); ++i) {
    Status s = writers[i].Finish();
    if (s.ok()) continue;
    for (size_t j = 0; j < i; ++j)
      std::filesystem::remove(std::filesystem::path(writers[j].manifest().directory) /
                              kManifestName);
    return s;
  }
  return Status::Ok();
}

uint64_t BytesWritten(const std::vector<TileStoreWriter>& writers) {
  uint64_t bytes = 0;
  for (const TileStoreWriter& w : writers) bytes += w.bytes_written();
  return bytes;
}

}  // namespace

Result<MovieManifest> CutMovie(FrameSource& source, const CutOptions& o) {
  auto writers = CreateWriters(o);
  if (!writers.ok()) return writers.status();
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
      for (TileStoreWriter& w : *writers)
        if (w.holds(t)) TS_RETURN_IF_ERROR(w.AppendFrame(t, tile));
    }
    ++frames;
    bar.Update(frames, BytesWritten(*writers));
  }
  if (frames == 0) return Status::InvalidArgument("the source has no frames");
  TS_RETURN_IF_ERROR(FinishAll(*writers));
  if (o.progress) bar.Finish(frames, BytesWritten(*writers));
  return writers->front().manifest();
}

}  // namespace tilestream
