#include "streamer/sdp_files.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

namespace tilestream {

TileStreamDescription DescribeTileStream(const WallConfig& c, uint32_t t) {
  const TileRoute& r = c.routes[t];
  const std::string name = TileId::FromIndex(t, c.wall.layout).Name();
  TileStreamDescription d;
  d.name = "tilestream " + name;
  d.source_address = c.nics[r.nic].address;
  d.destination_address = c.nodes[r.node].address;
  d.port = r.port;
  d.payload_type = c.stream.payload_type;
  d.tile = c.wall.tile;
  d.fps = c.wall.fps;
  d.ssrc = TileSsrc(t);
  d.packed = c.stream.packing == Packing::kPacked;
  if (r.retransmission) {
    d.rtx_payload_type = c.stream.rtx_payload_type;
    d.rtx_ssrc = TileRtxSsrc(t);
    d.rtx_time_ms = static_cast<uint32_t>(2000 / c.wall.fps);  // two frames
  }
  return d;
}

Status WriteSdpFiles(const WallConfig& c, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (uint32_t t = 0; t < c.tile_count(); ++t) {
    const std::string path =
        fmt::format("{}/tile_{}.sdp", dir, TileId::FromIndex(t, c.wall.layout).Name());
    std::ofstream out(path);
    out << WriteSdp(DescribeTileStream(c, t));
    if (!out) return Status::IoError("cannot write " + path);
  }
  return Status::Ok();
}

}  // namespace tilestream
