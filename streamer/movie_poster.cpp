#include "streamer/movie_poster.h"

#include <fmt/format.h>

#include <cstring>
#include <filesystem>

#include "common/base/aligned_buffer.h"
#include "common/base/json_text.h"
#include "common/image/thumbnail.h"
#include "common/store/tile_store.h"
#include "streamer/thumbnail_board.h"

namespace tilestream {
namespace {

constexpr size_t kMaxName = 255;

bool PlainName(std::string_view name) {
  return !name.empty() && name.size() <= kMaxName && name != "." && name != ".." &&
         name.find('/') == std::string_view::npos && name.find('\0') == std::string_view::npos;
}

}  // namespace

Result<Image> MoviePoster(const std::string& library, std::string_view name) {
  if (!PlainName(name)) return Status::NotFound("no such movie: " + Printable(name));
  auto m = OpenTileStore((std::filesystem::path(library) / name).string(), /*check_files=*/false);
  if (!m.ok()) return Status::NotFound("no such movie: " + Printable(name));
  WallSettings wall;
  wall.layout = m->layout;
  wall.tile = m->tile;
  wall.bezel_x = m->bezel_x;
  wall.bezel_y = m->bezel_y;
  ThumbnailBoard board(wall);
  const ThumbnailSize size = ThumbnailOf(m->tile.width, m->tile.height);
  auto frame = AlignedBuffer::Allocate(m->frame_stride);
  if (!frame.ok()) return frame.status();
  std::vector<std::byte> message(sizeof(ThumbnailHeader) + size.bytes());
  for (uint32_t t = 0; t < m->tile_files.size(); ++t) {
    auto reader = TileReader::Open(*m, t, /*direct=*/false);
    if (!reader.ok() || reader->frames() == 0 ||
        !reader->ReadFrame(0, {frame->data(), m->frame_stride}).ok())
      continue;  // not on this server, or broken: black
    const ThumbnailHeader h{t, size.width, size.height, 0, 0};
    std::memcpy(message.data(), &h, sizeof h);
    MakeThumbnail(frame->data(), m->tile.width, m->tile.height, size, message.data() + sizeof h);
    board.Accept(message);
  }
  return board.Wall();
}

}  // namespace tilestream
