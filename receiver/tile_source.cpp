#include "receiver/tile_source.h"

#include <fmt/format.h>

#include <filesystem>

#include "receiver/sdp_streams.h"

namespace tilestream {

Result<TileSource> ResolveTileSource(const WallConfig& c, uint32_t tile) {
  const TileRoute& route = c.routes[tile];
  TileSource s;
  s.payload_type = c.stream.payload_type;
  if (route.sdp.empty()) {
    if (route.any_ssrc)
      s.ours = false;
    else
      s.ssrc = TileSsrc(tile);
    return s;
  }
  std::filesystem::path path = route.sdp;
  if (path.is_relative()) path = std::filesystem::path(c.source).parent_path() / path;
  auto streams = ReadSdpFiles({path.string()});
  if (!streams.ok()) return streams.status();
  const TileStreamDescription& d = (*streams)[0];
  const std::string name = TileId::FromIndex(tile, c.wall.layout).Name();
  if (!(d.tile == c.wall.tile))
    return Status::InvalidArgument(fmt::format("{}: a {}x{} stream for tile {} of {}x{} ({})",
                                               path.string(), d.tile.width, d.tile.height, name,
                                               c.wall.tile.width, c.wall.tile.height, c.source));
  if (d.port != route.port)
    return Status::InvalidArgument(
        fmt::format("{}: port {}, but tile {} listens on {} (ports in {})", path.string(), d.port,
                    name, route.port, c.source));
  s.ours = false;
  s.payload_type = d.payload_type;
  if (d.ssrc != 0 && !route.any_ssrc) s.ssrc = d.ssrc;
  return s;
}

}  // namespace tilestream
