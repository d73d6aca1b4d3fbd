#include "receiver/sdp_streams.h"

#include <fmt/format.h>

#include <filesystem>

namespace tilestream {

Result<std::vector<TileStreamDescription>> ReadSdpFiles(const std::vector<std::string>& paths) {
  std::vector<TileStreamDescription> out;
  for (const std::string& path : paths) {
    auto d = ReadSdpFile(path);
    if (!d.ok()) return d.status();
    if (d->tile.sampling != Sampling::kRgb8)
      return Status::Unsupported(fmt::format(
          "{}: a {} stream is shown through the streamer as a live source (docs/live.md); a "
          "receiver takes RGB 8-bit",
          path, SamplingName(d->tile.sampling)));
    out.push_back(std::move(d).value());
  }
  return out;
}

Result<WallConfig> WallConfigForStreams(const std::vector<TileStreamDescription>& streams,
                                        const std::vector<std::string>& paths) {
  if (streams.empty()) return Status::InvalidArgument("no SDP file");
  const TileStreamDescription& first = streams[0];
  WallConfig c;
  c.source = paths[0];
  c.wall.layout = {static_cast<uint32_t>(streams.size()), 1};
  c.wall.tile = first.tile;
  if (first.fps > 0) c.wall.fps = first.fps;
  c.sync.enabled = false;
  DisplayNode node;
  node.name = "localhost";
  node.address = first.destination_address.empty() ? "0.0.0.0" : first.destination_address;
  for (size_t i = 0; i < streams.size(); ++i) {
    const TileStreamDescription& d = streams[i];
    if (!(d.tile == first.tile))
      return Status::InvalidArgument(
          fmt::format("{}: {}x{} stream, but {} is {}x{}: one geometry per receiver", paths[i],
                      d.tile.width, d.tile.height, paths[0], first.tile.width, first.tile.height));
    if (d.destination_address != first.destination_address)
      return Status::InvalidArgument(
          fmt::format("{}: address {}, but {} has {}: one address per receiver", paths[i],
                      d.destination_address, paths[0], first.destination_address));
    node.tiles.push_back(TileId::FromIndex(static_cast<uint32_t>(i), c.wall.layout));
    node.ports.push_back(d.port);
    node.displays.push_back(static_cast<int>(i));
    node.sdp.push_back(std::filesystem::absolute(paths[i]).string());
  }
  c.nodes = {node};
  if (Status s = ValidateWallConfig(&c); !s.ok()) return s;
  return c;
}

}  // namespace tilestream
