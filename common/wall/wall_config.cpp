#include "common/wall/wall_config.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "common/wall/ipv4_subnet.h"
#include "common/wall/nic_assignment.h"
#include "common/wall/toml_reader.h"

namespace tilestream {
namespace {

constexpr uint32_t kMinMtu = 576;  // the smallest IPv4 MTU; one RGB pixel needs 23 bytes
constexpr uint32_t kMaxMtu = 65535;
constexpr size_t kMinSocketBuffer = size_t{64} << 10;
constexpr size_t kMaxSocketBuffer = size_t{2} << 30;

void ReadWall(TomlReader& r, const toml::table& t, WallSettings* w) {
  r.CheckKeys(t, "wall",
              {"columns", "rows", "tile_width", "tile_height", "bezel_x", "bezel_y", "fps"});
  r.Int(t, "wall", "columns", 1, kMaxLayoutSide, &w->layout.columns);
  r.Int(t, "wall", "rows", 1, kMaxLayoutSide, &w->layout.rows);
  r.Int(t, "wall", "tile_width", 1, kMaxTileDimension, &w->tile.width);
  r.Int(t, "wall", "tile_height", 1, kMaxTileDimension, &w->tile.height);
  r.Int(t, "wall", "bezel_x", 0, kMaxTileDimension, &w->bezel_x);
  r.Int(t, "wall", "bezel_y", 0, kMaxTileDimension, &w->bezel_y);
  r.Float(t, "wall", "fps", 0.001, 1000, &w->fps);
}

void ReadStream(TomlReader& r, const toml::table& t, StreamSettings* s) {
  r.CheckKeys(t, "stream",
              {"mtu", "packing", "send_buffer", "receive_buffer", "pacing", "pacing_quantum_us",
               "max_burst_bytes", "payload_type", "port_base", "retransmission",
               "retransmission_share", "rtx_payload_type", "reorder_ms"});
  r.Int(t, "stream", "mtu", 0, std::numeric_limits<uint32_t>::max(), &s->mtu);
  std::string packing;
  r.String(t, "stream", "packing", &packing);
  if (packing == "line")
    s->packing = Packing::kLine;
  else if (packing == "packed")
    s->packing = Packing::kPacked;
  else if (!packing.empty())
    r.Error(t.get("packing"), "stream.packing", "'" + packing + "' is not 'packed' or 'line'");
  r.Int(t, "stream", "send_buffer", 0, std::numeric_limits<int64_t>::max(), &s->send_buffer);
  r.Int(t, "stream", "receive_buffer", 0, std::numeric_limits<int64_t>::max(), &s->receive_buffer);
  r.Bool(t, "stream", "pacing", &s->pacing);
  r.Int(t, "stream", "pacing_quantum_us", 50, 100000, &s->pacing_quantum_us);
  r.Int(t, "stream", "max_burst_bytes", 9000, std::numeric_limits<int64_t>::max(),
        &s->max_burst_bytes);
  r.Int(t, "stream", "payload_type", 0, 255, &s->payload_type);
  r.Int(t, "stream", "port_base", 1, 65535, &s->port_base);
  r.Bool(t, "stream", "retransmission", &s->retransmission);
  r.Float(t, "stream", "retransmission_share", 0, 1, &s->retransmission_share);
  r.Int(t, "stream", "rtx_payload_type", 0, 255, &s->rtx_payload_type);
  r.Float(t, "stream", "reorder_ms", 0, 1000, &s->reorder_ms);
}

void ReadNic(TomlReader& r, const toml::table& t, const std::string& path, Nic* nic) {
  r.CheckKeys(t, path, {"name", "server", "address", "numa_node", "speed_gbps"});
  r.String(t, path, "name", &nic->name);
  r.String(t, path, "server", &nic->server_name);
  r.String(t, path, "address", &nic->address);
  r.Int(t, path, "numa_node", -1, 1023, &nic->numa_node);
  r.Float(t, path, "speed_gbps", 0.001, 100000, &nic->speed_gbps);
  if (nic->name.empty()) r.Error(&t, path + ".name", "every [[nic]] needs a name");
}

// A list of tile names. The layout may still change (flags): they are
// checked against it in Validate.
void ReadTileNames(TomlReader& r, const toml::table& t, const std::string& path,
                   std::string_view name, std::vector<TileId>* out) {
  r.Array(t, path, name, [&](const toml::node& e, const std::string& key) {
    const auto s = e.value<std::string>();
    if (!s) return r.Error(&e, key, "expected a tile name like \"r0c1\"");
    auto id = ParseTileName(*s, Layout{kMaxLayoutSide, kMaxLayoutSide});
    if (!id.ok()) return r.Error(&e, key, id.status().message());
    out->push_back(*id);
  });
}

void ReadServer(TomlReader& r, const toml::table& t, const std::string& path, Server* server) {
  r.CheckKeys(t, path, {"name", "store", "tiles"});
  r.String(t, path, "name", &server->name);
  r.String(t, path, "store", &server->store);
  ReadTileNames(r, t, path, "tiles", &server->tiles);
  if (server->name.empty()) r.Error(&t, path + ".name", "every [[server]] needs a name");
}

void ReadMpi(TomlReader& r, const toml::table& t, MpiSettings* m) {
  r.CheckKeys(t, "mpi", {"network"});
  r.String(t, "mpi", "network", &m->network);
}

void ReadNode(TomlReader& r, const toml::table& t, const std::string& path, DisplayNode* node) {
  r.CheckKeys(t, path,
              {"name", "address", "tiles", "ports", "displays", "nic", "sdp", "any_ssrc",
               "no_retransmission"});
  r.String(t, path, "name", &node->name);
  r.String(t, path, "address", &node->address);
  r.String(t, path, "nic", &node->nic);
  ReadTileNames(r, t, path, "tiles", &node->tiles);
  r.Array(t, path, "ports", [&](const toml::node& e, const std::string& key) {
    const auto v = e.value_exact<int64_t>();
    if (!v || *v < 1 || *v > 65535) return r.Error(&e, key, "expected a port 1..65535");
    node->ports.push_back(static_cast<uint16_t>(*v));
  });
  r.Array(t, path, "displays", [&](const toml::node& e, const std::string& key) {
    const auto v = e.value_exact<int64_t>();
    if (!v || *v < 0 || *v > 255) return r.Error(&e, key, "expected a display index 0..255");
    node->displays.push_back(static_cast<int>(*v));
  });
  r.Array(t, path, "sdp", [&](const toml::node& e, const std::string& key) {
    const auto v = e.value<std::string>();
    if (!v || v->size() > 4096)
      return r.Error(&e, key, "expected the path of an SDP file, or \"\" for our own stream");
    node->sdp.push_back(*v);
  });
  ReadTileNames(r, t, path, "any_ssrc", &node->any_ssrc);
  ReadTileNames(r, t, path, "no_retransmission", &node->no_retransmission);
  if (node->name.empty()) r.Error(&t, path + ".name", "every [[node]] needs a name");
  if (node->address.empty()) r.Error(&t, path + ".address", "every [[node]] needs an address");
}

void ReadControl(TomlReader& r, const toml::table& t, ControlSettings* c) {
  r.CheckKeys(t, "control",
              {"listen", "address", "port", "token_file", "idle_timeout_s", "line_timeout_s",
               "max_clients", "max_line_bytes"});
  r.Int(t, "control", "idle_timeout_s", 1, 86400, &c->idle_timeout_s);
  r.Int(t, "control", "line_timeout_s", 1, 3600, &c->line_timeout_s);
  r.Int(t, "control", "max_clients", 1, 4096, &c->max_clients);
  r.Int(t, "control", "max_line_bytes", 256, 1 << 20, &c->max_line_bytes);
  r.String(t, "control", "listen", &c->listen_address);
  r.String(t, "control", "address", &c->address);
  r.Int(t, "control", "port", 1, 65535, &c->port);
  r.String(t, "control", "token_file", &c->token_file);
}

void ReadHttp(TomlReader& r, const toml::table& t, HttpSettings* h) {
  r.CheckKeys(
      t, "http",
      {"listen", "port", "node_listen", "node_port_base", "max_clients", "max_queued",
       "max_connections", "max_connections_per_address", "max_body_bytes", "header_timeout_ms",
       "timeout_s", "keep_alive_s", "requests_per_second_per_address", "thumbnail_period_ms"});
  r.String(t, "http", "listen", &h->listen_address);
  r.Int(t, "http", "port", 0, 65535, &h->port);
  r.String(t, "http", "node_listen", &h->node_listen_address);
  r.Int(t, "http", "node_port_base", 0, 65535, &h->node_port_base);
  r.Int(t, "http", "max_clients", 1, 256, &h->max_clients);
  r.Int(t, "http", "max_queued", 1, 65536, &h->max_queued);
  r.Int(t, "http", "max_connections", 1, 65536, &h->max_connections);
  r.Int(t, "http", "max_connections_per_address", 1, 65536, &h->max_connections_per_address);
  r.Int(t, "http", "max_body_bytes", 64, 1 << 20, &h->max_body_bytes);
  r.Int(t, "http", "header_timeout_ms", 100, 300'000, &h->header_timeout_ms);
  r.Int(t, "http", "timeout_s", 1, 300, &h->timeout_s);
  r.Int(t, "http", "keep_alive_s", 1, 3600, &h->keep_alive_s);
  r.Int(t, "http", "requests_per_second_per_address", 0, 1'000'000,
        &h->requests_per_second_per_address);
  r.Int(t, "http", "thumbnail_period_ms", 0, 60000, &h->thumbnail_period_ms);
}

void ReadSync(TomlReader& r, const toml::table& t, SyncSettings* s) {
  r.CheckKeys(t, "sync",
              {"enabled", "policy", "deadline_ms", "wait_ms", "latency_ms", "max_latency_ms"});
  r.Bool(t, "sync", "enabled", &s->enabled);
  std::string policy;
  r.String(t, "sync", "policy", &policy);
  if (policy == "partial")
    s->partial = true;
  else if (!policy.empty() && policy != "skip")
    r.Error(t.get("policy"), "sync.policy",
            fmt::format("'{}' is not a policy (skip or partial)", policy));
  r.Int(t, "sync", "deadline_ms", 0, 10000, &s->deadline_ms);
  r.Int(t, "sync", "wait_ms", 0, 600000, &s->wait_ms);
  r.Int(t, "sync", "max_latency_ms", 1, 10000, &s->max_latency_ms);
  if (const toml::node* n = t.get("latency_ms"); n && n->is_string()) {
    std::string latency;
    r.String(t, "sync", "latency_ms", &latency);
    if (latency != "auto")
      r.Error(n, "sync.latency_ms", fmt::format("'{}' is not a number of ms or \"auto\"", latency));
    s->latency = SyncSettings::kAutoLatency;
  } else {
    int64_t ms = -1;
    r.Int(t, "sync", "latency_ms", 0, 10000, &ms);
    if (ms >= 0) s->latency = static_cast<int32_t>(ms);
  }
}

void ReadJoystick(TomlReader& r, const toml::table& t, JoystickMap* j) {
  r.CheckKeys(t, "joystick",
              {"scrub_axis", "scrub_speed", "dead_zone", "toggle_button", "step_back_button",
               "step_forward_button", "previous_button", "next_button"});
  r.Int(t, "joystick", "scrub_axis", 0, 255, &j->scrub_axis);
  r.Float(t, "joystick", "scrub_speed", 0.1, 64, &j->scrub_speed);
  r.Float(t, "joystick", "dead_zone", 0, 0.9, &j->dead_zone);
  r.Int(t, "joystick", "toggle_button", 0, 255, &j->toggle_button);
  r.Int(t, "joystick", "step_back_button", 0, 255, &j->step_back_button);
  r.Int(t, "joystick", "step_forward_button", 0, 255, &j->step_forward_button);
  r.Int(t, "joystick", "previous_button", 0, 255, &j->previous_button);
  r.Int(t, "joystick", "next_button", 0, 255, &j->next_button);
}

bool IsIpLiteral(const std::string& a) {
  unsigned char buf[16];
  return inet_pton(AF_INET, a.c_str(), buf) == 1 || inet_pton(AF_INET6, a.c_str(), buf) == 1;
}

// RFC 1123: dot-separated labels of 1..63 letters, digits and inner
// hyphens; the last label not all digits, so a mistyped IPv4 address
// ("300.1.1.1") is not taken for a name.
bool IsHostName(const std::string& a) {
  if (a.empty() || a.size() > 253) return false;
  size_t begin = 0;
  bool all_digits = false;
  while (begin <= a.size()) {
    const size_t end = std::min(a.find('.', begin), a.size());
    const std::string_view label(a.data() + begin, end - begin);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-')
      return false;
    all_digits = true;
    for (char c : label) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
      all_digits = all_digits && std::isdigit(static_cast<unsigned char>(c));
    }
    begin = end + 1;
  }
  return !all_digits;
}

bool IsWildcard(const std::string& a) { return a == "0.0.0.0" || a == "::"; }

// "file:line: key" for messages about a key of the config.
std::string Where(const WallConfig& c, const std::string& key) {
  for (const auto& [k, line] : c.key_lines)
    if (k == key && line > 0) return fmt::format("{}:{}: {}", c.source, line, key);
  return fmt::format("{}: {}", c.source, key);
}

}  // namespace

bool IsLoopbackAddress(std::string_view address) {
  return address.starts_with("127.") || address == "::1" || address == "localhost";
}

WallConfig DefaultWallConfig(Layout layout) {
  WallConfig c;
  c.wall.layout = layout;
  Status s = ValidateWallConfig(&c);
  assert(s.ok());
  (void)s;
  return c;
}

namespace {

// ValidateWallConfig's work, step by step; every problem is collected with
// its key before the first step that needs the earlier ones right stops.
class ConfigCheck {
 public:
  explicit ConfigCheck(WallConfig* config) : c_(*config) {}

  void Fail(const std::string& key, const std::string& problem) {
    errors_.push_back(Where(c_, key) + ": " + problem);
  }
  bool ok() const { return errors_.empty(); }
  Status status() const {
    return ok() ? Status::Ok() : Status::InvalidArgument(JoinLines(errors_));
  }

  void Wall();
  void Stream();
  void Defaults();
  void Servers();
  void Nics();
  void Nodes();
  void ServerTiles();
  void Control();
  void Http();
  void Mpi();
  void AssignNicsToTiles();

 private:
  uint32_t NicServer(const Nic& nic, const std::string& key);
  void NicAddress(size_t i, const std::string& key);
  std::string NicList() const;
  void NodeFields(size_t n, const std::string& key);
  int NodeNic(size_t n, const std::string& key);
  void RouteTile(size_t n, size_t i, int nic, const std::string& key);
  void TilePort(const DisplayNode& node, size_t i, uint32_t t, const std::string& key);

  WallConfig& c_;
  std::vector<std::string> errors_;
  std::map<std::string, uint32_t> server_index_;
  std::map<std::string, uint32_t> nic_index_;               // "server/name" -> NIC
  std::map<std::string, std::vector<uint32_t>> nic_names_;  // "name" -> NICs of that name
  std::map<std::string, uint32_t> nic_addresses_;
  std::vector<int> tile_node_, pinned_, tile_server_;
  std::set<std::string> node_names_;
  std::map<std::pair<std::string, uint16_t>, std::string> used_ports_;  // -> tile
};

void ConfigCheck::Wall() {
  const WallSettings& w = c_.wall;
  if (w.layout.columns < 1 || w.layout.rows < 1 || w.layout.columns > kMaxLayoutSide ||
      w.layout.rows > kMaxLayoutSide)
    Fail("wall.columns", fmt::format("layout {} is outside 1x1..{}x{}", w.layout.ToString(),
                                     kMaxLayoutSide, kMaxLayoutSide));
  if (w.tile.width < 1 || w.tile.height < 1 || w.tile.width > kMaxTileDimension ||
      w.tile.height > kMaxTileDimension)
    Fail("wall.tile_width",
         fmt::format("tile {}x{} is outside 1x1..32767x32767 (RFC 4175's 15-bit fields)",
                     w.tile.width, w.tile.height));
  if (!(w.fps > 0 && w.fps <= 1000)) Fail("wall.fps", fmt::format("{} is outside 0..1000", w.fps));
}

void ConfigCheck::Stream() {
  const StreamSettings& s = c_.stream;
  if (s.mtu < kMinMtu || s.mtu > kMaxMtu)
    Fail("stream.mtu", fmt::format("MTU {} is outside {}..{} (a packet must hold the RTP and "
                                   "RFC 4175 headers and at least one pixel)",
                                   s.mtu, kMinMtu, kMaxMtu));
  if (s.max_burst_bytes > s.send_buffer)
    Fail("stream.max_burst_bytes",
         fmt::format("{} bytes is more than the send buffer ({}): a burst must fit in it",
                     s.max_burst_bytes, s.send_buffer));
  if (s.send_buffer < kMinSocketBuffer || s.send_buffer > kMaxSocketBuffer)
    Fail("stream.send_buffer", fmt::format("{} bytes is outside 64 KiB..2 GiB", s.send_buffer));
  if (s.receive_buffer < kMinSocketBuffer || s.receive_buffer > kMaxSocketBuffer)
    Fail("stream.receive_buffer",
         fmt::format("{} bytes is outside 64 KiB..2 GiB", s.receive_buffer));
  if (s.payload_type < 96 || s.payload_type > 127)
    Fail("stream.payload_type",
         fmt::format("{} is outside the dynamic range 96..127", s.payload_type));
  if (s.rtx_payload_type < 96 || s.rtx_payload_type > 127 || s.rtx_payload_type == s.payload_type)
    Fail("stream.rtx_payload_type",
         fmt::format("{} is outside the dynamic range 96..127 or the stream's own payload type",
                     s.rtx_payload_type));
}

// One server without [[server]] entries, one NIC without [[nic]] ones, one
// loopback node without [[node]] ones.
void ConfigCheck::Defaults() {
  if (c_.servers.empty()) c_.servers.emplace_back();
  if (c_.nics.empty()) c_.nics.push_back(Nic{"default", "", -1, 0, "", 0});
  if (!c_.nodes.empty()) return;
  DisplayNode local;
  local.name = "localhost";
  local.address = "127.0.0.1";
  for (uint32_t i = 0; i < c_.tile_count(); ++i)
    local.tiles.push_back(TileId::FromIndex(i, c_.wall.layout));
  c_.nodes.push_back(std::move(local));
}

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

void ConfigCheck::Control() {
  const ControlSettings& k = c_.control;
  if (!IsIpLiteral(k.listen_address) && k.listen_address != "localhost")
    Fail("control.listen", fmt::format("'{}' is not an IPv4 or IPv6 address", k.listen_address));
  if (!IsLoopbackAddress(k.listen_address) && k.token_file.empty())
    Fail("control.token_file", fmt::format("the control listener on {} is not loopback: a "
                                           "token_file is required",
                                           k.listen_address));
  if (IsWildcard(k.listen_address) && k.address.empty())
    Fail("control.address", fmt::format("the control listener is on every address ({}): say "
                                        "which one receivers and wallctl connect to",
                                        k.listen_address));
}

// The web listeners: addresses, the token for remote ones, and ports that
// clash with neither the control port nor each other.
void ConfigCheck::Http() {
  const HttpSettings& h = c_.http;
  const bool token = !c_.control.token_file.empty();
  for (const auto& [key, address] :
       {std::pair<std::string, std::string>{"http.listen", h.listen_address},
        {"http.node_listen", h.node_listen_address}}) {
    if (!IsIpLiteral(address) && address != "localhost")
      Fail(key, fmt::format("'{}' is not an IPv4 or IPv6 address", address));
    else if (!IsLoopbackAddress(address) && !token)
      Fail("control.token_file", fmt::format("{} = '{}' is not loopback: a token_file is required "
                                             "(clients send it as 'Authorization: Bearer TOKEN')",
                                             key, address));
  }
  if (h.port != 0 && h.port == c_.control.port)
    Fail("http.port", fmt::format("port {} is also control.port", h.port));
  const uint32_t last = uint32_t{h.node_port_base} + static_cast<uint32_t>(c_.nodes.size()) - 1;
  if (h.node_port_base == 0) return;
  if (last > 65535)
    Fail("http.node_port_base",
         fmt::format("{} + {} nodes is beyond 65535", h.node_port_base, c_.nodes.size()));
  for (uint16_t port : {c_.control.port, h.port})
    if (port != 0 && port >= h.node_port_base && port <= last)
      Fail("http.node_port_base",
           fmt::format("the nodes' ports {}..{} include port {}", h.node_port_base, last, port));
}

// Open MPI's network: a subnet that holds none of the media NICs.
void ConfigCheck::Mpi() {
  const std::string& network = c_.mpi.network;
  if (network.empty()) return;
  const std::optional<Ipv4Subnet> subnet = Ipv4Subnet::Parse(network);
  if (!subnet) {
    Fail("mpi.network", fmt::format("'{}' is not an IPv4 subnet like \"10.99.0.0/24\"", network));
    return;
  }
  in_addr address{};
  for (const Nic& nic : c_.nics) {
    if (inet_pton(AF_INET, nic.address.c_str(), &address) == 1 &&
        subnet->Contains(ntohl(address.s_addr)))
      Fail("mpi.network", fmt::format("NIC '{}' ({}) is inside {}: MPI's traffic belongs on the "
                                      "management network, off the media NICs",
                                      nic.name, nic.address, network));
  }
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

}  // namespace

Status ValidateWallConfig(WallConfig* config) {
  ConfigCheck check(config);
  check.Wall();
  check.Stream();
  if (!check.ok()) return check.status();
  check.Defaults();
  check.Servers();
  check.Nics();
  check.Nodes();
  if (check.ok()) check.ServerTiles();
  check.Control();
  check.Http();
  check.Mpi();
  if (!check.ok()) return check.status();
  check.AssignNicsToTiles();
  return check.status();
}

Result<WallConfig> ParseWallConfig(std::string_view toml_text, std::string_view source) {
  WallConfig c;
  c.source = std::string(source);
  auto parsed = ParseToml(toml_text, source);
  if (!parsed.ok()) return parsed.status();
  const toml::table& root = *parsed;
  TomlReader r(c.source, &c.key_lines);
  r.CheckKeys(root, "",
              {"wall", "stream", "server", "nic", "node", "control", "http", "sync", "joystick",
               "mpi", "library"});
  if (const toml::table* t = Section(r, root, "wall")) ReadWall(r, *t, &c.wall);
  if (const toml::table* t = Section(r, root, "stream")) ReadStream(r, *t, &c.stream);
  if (const toml::table* t = Section(r, root, "control")) ReadControl(r, *t, &c.control);
  if (const toml::table* t = Section(r, root, "http")) ReadHttp(r, *t, &c.http);
  if (const toml::table* t = Section(r, root, "sync")) ReadSync(r, *t, &c.sync);
  if (const toml::table* t = Section(r, root, "joystick")) ReadJoystick(r, *t, &c.joystick);
  if (const toml::table* t = Section(r, root, "mpi")) ReadMpi(r, *t, &c.mpi);
  if (const toml::table* t = Section(r, root, "library")) {
    r.CheckKeys(*t, "library", {"path", "slate"});
    r.String(*t, "library", "path", &c.library_path);
    r.String(*t, "library", "slate", &c.slate_path);
  }
  TableArray(r, root, "server", [&](const toml::table& t, const std::string& path) {
    c.servers.emplace_back();
    ReadServer(r, t, path, &c.servers.back());
  });
  TableArray(r, root, "nic", [&](const toml::table& t, const std::string& path) {
    c.nics.emplace_back();
    ReadNic(r, t, path, &c.nics.back());
  });
  TableArray(r, root, "node", [&](const toml::table& t, const std::string& path) {
    c.nodes.emplace_back();
    ReadNode(r, t, path, &c.nodes.back());
  });
  if (!r.errors().empty()) return Status::InvalidArgument(JoinLines(r.errors()));
  TS_RETURN_IF_ERROR(ValidateWallConfig(&c));
  return c;
}

Result<WallConfig> LoadWallConfig(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError("config " + path, errno);
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::IoError("config " + path, errno);
  return ParseWallConfig(text.str(), path);
}

PixelOrigin TileOrigin(const WallSettings& wall, uint32_t tile_index) {
  const TileId id = TileId::FromIndex(tile_index, wall.layout);
  return {id.column * (wall.tile.width + wall.bezel_x), id.row * (wall.tile.height + wall.bezel_y)};
}

}  // namespace tilestream
