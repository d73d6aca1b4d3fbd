// The servers, NICs and display nodes of a wall's config, and each tile's
// route through them (ConfigCheck, common/wall/config_check.h).
#include <fmt/format.h>

#include <algorithm>

#include "common/wall/config_check.h"
#include "common/wall/ipv4_subnet.h"
#include "common/wall/nic_assignment.h"

namespace tilestream {

void ConfigCheck::Servers() {
  for (size_t i = 0; i < c_.servers.size(); ++i) {
    const Server& server = c_.servers[i];
    const std::string key = fmt::format("server[{}]", i);
    if (!server_index_.emplace(server.name, static_cast<uint32_t>(i)).second)
      Fail(key + ".name", fmt::format("server '{}' is listed twice", server.name));
    if (!server.name.empty() && !IsHostName(server.name))
      Fail(key + ".name", fmt::format("'{}' is not a host name", server.name));
    if (!server.store.empty() && server.store.front() != '/')
      Fail(key + ".store", fmt::format("'{}' is not an absolute path", server.store));
  }
}

void ConfigCheck::Nics() {
  for (size_t i = 0; i < c_.nics.size(); ++i) {
    Nic& nic = c_.nics[i];
    const std::string key = fmt::format("nic[{}]", i);
    nic.server = NicServer(nic, key);
    const std::string& server = c_.servers[nic.server].name;
    if (!nic_index_.emplace(server + "/" + nic.name, static_cast<uint32_t>(i)).second)
      Fail(key + ".name", server.empty() ? fmt::format("NIC '{}' is listed twice", nic.name)
                                         : fmt::format("NIC '{}' is listed twice on server '{}'",
                                                       nic.name, server));
    nic_names_[nic.name].push_back(static_cast<uint32_t>(i));
    NicAddress(i, key);
  }
  for (size_t s = 0; s < c_.servers.size(); ++s) {
    if (std::none_of(c_.nics.begin(), c_.nics.end(), [s](const Nic& n) { return n.server == s; }))
      Fail(fmt::format("server[{}]", s),
           fmt::format("server '{}' has no NIC (a [[nic]] with server = \"{}\")",
                       c_.servers[s].name, c_.servers[s].name));
  }
}

// The server a NIC is on: named, or the only one.
uint32_t ConfigCheck::NicServer(const Nic& nic, const std::string& key) {
  if (nic.server_name.empty()) {
    if (c_.several_servers())
      Fail(key + ".server", fmt::format("the wall has {} servers: say which one NIC '{}' is on",
                                        c_.servers.size(), nic.name));
    return 0;
  }
  const auto it = server_index_.find(nic.server_name);
  if (it != server_index_.end()) return it->second;
  std::string known;
  for (const Server& x : c_.servers) known += (known.empty() ? "" : ", ") + x.name;
  Fail(key + ".server", fmt::format("unknown server '{}' (the [[server]] entries are: {})",
                                    nic.server_name, known.empty() ? "none" : known));
  return 0;
}

// An address, and one NIC has it: the same NIC listed under two servers is
// a mistake that would send one server's tiles from the other's address.
void ConfigCheck::NicAddress(size_t i, const std::string& key) {
  const Nic& nic = c_.nics[i];
  if (nic.address.empty()) return;
  if (!IsIpLiteral(nic.address)) {
    Fail(key + ".address", fmt::format("'{}' is not an IPv4 or IPv6 address", nic.address));
    return;
  }
  const auto [it, fresh] = nic_addresses_.emplace(nic.address, static_cast<uint32_t>(i));
  const Nic& other = c_.nics[it->second];
  if (!fresh && other.server != nic.server)
    Fail(key + ".address",
         fmt::format("{} is also the address of NIC '{}' on server '{}': a NIC is on one server",
                     nic.address, other.name, c_.servers[other.server].name));
}

// "eth2, eth3" or, on several servers, "a/eth2, b/eth2".
std::string ConfigCheck::NicList() const {
  std::string known;
  for (const Nic& x : c_.nics) {
    known += known.empty() ? "" : ", ";
    if (c_.several_servers()) known += c_.servers[x.server].name + "/";
    known += x.name;
  }
  return known;
}

void ConfigCheck::Nodes() {
  const uint32_t tiles = c_.tile_count();
  tile_node_.assign(tiles, -1);
  pinned_.assign(tiles, -1);
  c_.routes.assign(tiles, TileRoute{});
  for (size_t n = 0; n < c_.nodes.size(); ++n) {
    const std::string key = fmt::format("node[{}]", n);
    NodeFields(n, key);
    const int nic = NodeNic(n, key);
    for (size_t i = 0; i < c_.nodes[n].tiles.size(); ++i) RouteTile(n, i, nic, key);
  }
  for (uint32_t t = 0; t < tiles; ++t) {
    if (tile_node_[t] < 0)
      Fail("node", fmt::format("tile {} is on no display node",
                               TileId::FromIndex(t, c_.wall.layout).Name()));
  }
}

void ConfigCheck::NodeFields(size_t n, const std::string& key) {
  const DisplayNode& node = c_.nodes[n];
  if (!node_names_.insert(node.name).second)
    Fail(key + ".name", fmt::format("display node '{}' is listed twice", node.name));
  if (!IsIpLiteral(node.address) && !IsHostName(node.address))
    Fail(key + ".address", fmt::format("'{}' is not an address or host name", node.address));
  if (node.tiles.empty()) Fail(key + ".tiles", "a display node needs at least one tile");
  if (!node.ports.empty() && node.ports.size() != node.tiles.size())
    Fail(key + ".ports",
         fmt::format("{} ports for {} tiles", node.ports.size(), node.tiles.size()));
  if (!node.displays.empty() && node.displays.size() != node.tiles.size())
    Fail(key + ".displays",
         fmt::format("{} displays for {} tiles", node.displays.size(), node.tiles.size()));
  if (!node.sdp.empty() && node.sdp.size() != node.tiles.size())
    Fail(key + ".sdp", fmt::format("{} SDP files for {} tiles (\"\" for a tile of our own stream)",
                                   node.sdp.size(), node.tiles.size()));
  for (const auto& [name, list] : {std::pair{"any_ssrc", &node.any_ssrc},
                                   std::pair{"no_retransmission", &node.no_retransmission}}) {
    for (const TileId& id : *list) {
      if (std::find(node.tiles.begin(), node.tiles.end(), id) == node.tiles.end())
        Fail(key + "." + name, fmt::format("tile {} is not one of this node's tiles", id.Name()));
    }
  }
}

// The NIC node n's tiles are pinned to; -1: balanced with the rest.
int ConfigCheck::NodeNic(size_t n, const std::string& key) {
  const DisplayNode& node = c_.nodes[n];
  if (node.nic.empty()) return -1;
  if (node.nic.find('/') != std::string::npos) {  // "server/name"
    const auto it = nic_index_.find(node.nic);
    if (it != nic_index_.end()) return static_cast<int>(it->second);
  } else if (const auto it = nic_names_.find(node.nic); it != nic_names_.end()) {
    if (it->second.size() == 1) return static_cast<int>(it->second.front());
    std::string choices;
    for (uint32_t n : it->second)
      choices += fmt::format("{}'{}/{}'", choices.empty() ? "" : " or ",
                             c_.servers[c_.nics[n].server].name, node.nic);
    Fail(key + ".nic",
         fmt::format("NIC '{}' is on {} servers: write {}", node.nic, it->second.size(), choices));
    return -1;
  }
  Fail(key + ".nic",
       fmt::format("unknown NIC '{}' (the [[nic]] entries are: {})", node.nic, NicList()));
  return -1;
}

// Each tile's server: listed in a [[server]]'s tiles, or its NIC's when its
// node pins one; the rest are balanced over the servers that list no tiles.
void ConfigCheck::ServerTiles() {
  const Layout& layout = c_.wall.layout;
  tile_server_.assign(c_.tile_count(), -1);
  for (size_t s = 0; s < c_.servers.size(); ++s) {
    const std::string key = fmt::format("server[{}].tiles", s);
    for (const TileId& id : c_.servers[s].tiles) {
      if (id.row >= layout.rows || id.column >= layout.columns) {
        Fail(key, fmt::format("tile {} is outside the {} layout", id.Name(), layout.ToString()));
        continue;
      }
      const uint32_t t = id.Index(layout);
      if (tile_server_[t] >= 0) {
        Fail(key, fmt::format("tile {} is also on server '{}'", id.Name(),
                              c_.servers[static_cast<size_t>(tile_server_[t])].name));
        continue;
      }
      tile_server_[t] = static_cast<int>(s);
      const int pin = pinned_[t];
      if (pin >= 0 && c_.nics[static_cast<size_t>(pin)].server != s)
        Fail(key, fmt::format("tile {} is on display node '{}', whose NIC '{}' is on server '{}'",
                              id.Name(), c_.nodes[static_cast<size_t>(tile_node_[t])].name,
                              c_.nics[static_cast<size_t>(pin)].name,
                              c_.servers[c_.nics[static_cast<size_t>(pin)].server].name));
    }
  }
  const bool open = std::any_of(c_.servers.begin(), c_.servers.end(),
                                [](const Server& x) { return x.tiles.empty(); });
  for (uint32_t t = 0; t < c_.tile_count(); ++t) {
    if (tile_server_[t] < 0 && pinned_[t] >= 0)
      tile_server_[t] = static_cast<int>(c_.nics[static_cast<size_t>(pinned_[t])].server);
    if (tile_server_[t] < 0 && !open)
      Fail("server", fmt::format("tile {} is on no server (every [[server]] lists its tiles)",
                                 TileId::FromIndex(t, layout).Name()));
  }
}

// The route of the i-th tile of node n.
void ConfigCheck::RouteTile(size_t n, size_t i, int nic, const std::string& key) {
  const DisplayNode& node = c_.nodes[n];
  const Layout& layout = c_.wall.layout;
  const TileId id = node.tiles[i];
  if (id.row >= layout.rows || id.column >= layout.columns) {
    Fail(key + ".tiles",
         fmt::format("tile {} is outside the {} layout", id.Name(), layout.ToString()));
    return;
  }
  const uint32_t t = id.Index(layout);
  if (tile_node_[t] >= 0) {
    Fail(key + ".tiles", fmt::format("tile {} is also on display node '{}'", id.Name(),
                                     c_.nodes[static_cast<size_t>(tile_node_[t])].name));
    return;
  }
  tile_node_[t] = static_cast<int>(n);
  pinned_[t] = nic;
  TileRoute& route = c_.routes[t];
  route.node = static_cast<uint32_t>(n);
  route.display = i < node.displays.size() ? node.displays[i] : static_cast<int>(i);
  route.sdp = i < node.sdp.size() ? node.sdp[i] : "";
  route.any_ssrc = std::find(node.any_ssrc.begin(), node.any_ssrc.end(), id) != node.any_ssrc.end();
  route.retransmission = c_.stream.retransmission && route.sdp.empty() &&
                         std::find(node.no_retransmission.begin(), node.no_retransmission.end(),
                                   id) == node.no_retransmission.end();
  TilePort(node, i, t, key);
}

// Tile t's port: the node's list, else port_base + t; unique per address and
// never the control port on the same host.
void ConfigCheck::TilePort(const DisplayNode& node, size_t i, uint32_t t, const std::string& key) {
  TileRoute& route = c_.routes[t];
  const uint16_t base = c_.stream.port_base;
  if (i < node.ports.size()) {
    route.port = node.ports[i];
  } else if (uint32_t{base} + t > 65535) {
    Fail("stream.port_base", fmt::format("port {} + tile {} is beyond 65535", base, t));
    return;
  } else {
    route.port = static_cast<uint16_t>(base + t);
  }
  const std::string name = node.tiles[i].Name();
  auto [it, fresh] = used_ports_.emplace(std::make_pair(node.address, route.port), name);
  if (!fresh)
    Fail(key + ".ports", fmt::format("port {} on {} is used by tiles {} and {}", route.port,
                                     node.address, it->second, name));
  const std::string& listen = c_.control.listen_address;
  const bool same_host = node.address == listen || IsWildcard(listen) ||
                         (IsLoopbackAddress(node.address) && IsLoopbackAddress(listen));
  if (same_host && route.port == c_.control.port)
    Fail("control.port",
         fmt::format("port {} is also the port of tile {} on {}", route.port, name, node.address));
}

// Balances the free tiles over their allowed NICs; then every server must
// have a tile (an empty one would get no slot in the hostfile).
void ConfigCheck::AssignNicsToTiles() {
  std::vector<double> bps(c_.tile_count(), c_.wall.tile_bits_per_second());
  std::vector<double> speeds;
  for (const Nic& nic : c_.nics) speeds.push_back(nic.balance_gbps() * 1e9);
  const std::vector<uint32_t> nic = AssignNics(pinned_, bps, speeds, [this](size_t t, size_t n) {
    const uint32_t server = c_.nics[n].server;
    return tile_server_[t] >= 0 ? server == static_cast<uint32_t>(tile_server_[t])
                                : c_.servers[server].tiles.empty();
  });
  std::vector<uint32_t> tiles(c_.servers.size(), 0);
  for (uint32_t t = 0; t < c_.tile_count(); ++t) {
    c_.routes[t].nic = nic[t];
    c_.routes[t].server = c_.nics[nic[t]].server;
    ++tiles[c_.routes[t].server];
  }
  for (size_t s = 0; s < c_.servers.size(); ++s)
    if (tiles[s] == 0)
      Fail(fmt::format("server[{}]", s),
           fmt::format("server '{}' streams no tile: the wall has more servers than it needs",
                       c_.servers[s].name));
}

}  // namespace tilestream
