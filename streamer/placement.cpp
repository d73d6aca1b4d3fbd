#include "streamer/placement.h"

#include <fmt/format.h>

#include "common/wall/server_hosts.h"

namespace tilestream {

int RanksOfWall(const WallConfig& c) { return static_cast<int>(c.tile_count()) + 1; }

std::string Hostfile(const WallConfig& c) {
  std::vector<uint32_t> slots(c.servers.size(), 0);
  slots[0] = 1;  // the coordinator
  for (const TileRoute& r : c.routes) ++slots[r.server];
  std::string text = fmt::format(
      "# Open MPI hostfile for {} (streamer --print-hostfile): one slot per tile,\n"
      "# the first server one more for the coordinator. Run with\n"
      "#   mpirun -n {} --hostfile THIS_FILE --map-by slot streamer --config ...\n",
      c.source, RanksOfWall(c));
  for (size_t s = 0; s < c.servers.size(); ++s) {
    const std::string& name = c.servers[s].name;
    text += fmt::format("{} slots={}\n", name.empty() ? "localhost" : name, slots[s]);
  }
  return text;
}

std::vector<std::string> MpirunOptions(const WallConfig& c) {
  if (c.mpi.network.empty()) return {};
  return {"--mca", "btl_tcp_if_include", c.mpi.network,
          "--mca", "oob_tcp_if_include", c.mpi.network};
}

Status CheckWorldSize(const WallConfig& c, int world_size) {
  if (!c.several_servers() || world_size == RanksOfWall(c)) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "the wall of {} runs on {} servers: it needs {} ranks (one per tile and the coordinator), "
      "placed by its hostfile, not {}: run it with scripts/streamer.sh, or `mpirun -n {} "
      "--hostfile H --map-by slot` with H from `streamer --config {} --print-hostfile`",
      c.source, c.servers.size(), RanksOfWall(c), world_size, RanksOfWall(c), c.source));
}

Status CheckPlacement(const WallConfig& c, const RankPlan& plan, int rank, std::string_view host) {
  if (!c.several_servers()) return Status::Ok();
  if (rank == 0) {
    if (SameHost(c.servers[0].name, host)) return Status::Ok();
    return Status::InvalidArgument(fmt::format(
        "the coordinator (rank 0) runs on host '{}', but belongs on the first server, '{}': "
        "start the job with the hostfile of `streamer --print-hostfile`",
        host, c.servers[0].name));
  }
  for (uint32_t tile : plan.tiles(rank)) {
    const Server& server = c.servers[c.routes[tile].server];
    if (!SameHost(server.name, host))
      return Status::InvalidArgument(fmt::format(
          "tile {} runs on host '{}', but its server is '{}' (its NIC and tile file are there): "
          "start the job with the hostfile of `streamer --print-hostfile`",
          TileId::FromIndex(tile, c.wall.layout).Name(), host, server.name));
  }
  return Status::Ok();
}

}  // namespace tilestream
