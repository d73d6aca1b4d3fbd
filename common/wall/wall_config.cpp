#include "common/wall/wall_config.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "common/wall/nic_assignment.h"
#include "common/wall/toml_reader.h"

namespace tilestream {
namespace {

constexpr uint32_t kMinMtu = 576;  // the smallest IPv4 MTU; one RGB pixel needs 23 bytes
constexpr uint32_t kMaxMtu = 65535;
constexpr size_t kMinSocketBuffer = 64 * 1024;
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
               "retransmission_share", "rtx_payload_type"});
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
}

void ReadNic(TomlReader& r, const toml::table& t, const std::string& path, Nic* nic) {
  r.CheckKeys(t, path, {"name", "address", "numa_node", "speed_gbps"});
  r.String(t, path, "name", &nic->name);
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
              {"listen", "address", "port", "token_file", "idle_timeout_s", "max_clients",
               "max_line_bytes"});
  r.Int(t, "control", "idle_timeout_s", 1, 86400, &c->idle_timeout_s);
  r.Int(t, "control", "max_clients", 1, 4096, &c->max_clients);
  r.Int(t, "control", "max_line_bytes", 256, 1 << 20, &c->max_line_bytes);
  r.String(t, "control", "listen", &c->listen_address);
  r.String(t, "control", "address", &c->address);
  r.Int(t, "control", "port", 1, 65535, &c->port);
  r.String(t, "control", "token_file", &c->token_file);
}

void ReadSync(TomlReader& r, const toml::table& t, SyncSettings* s) {
  r.CheckKeys(t, "sync", {"enabled", "policy", "deadline_ms", "wait_ms"});
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
}

void ReadJoystick(TomlReader& r, const toml::table& t, JoystickMap* j) {
  r.CheckKeys(t, "joystick",
              {"scrub_axis", "scrub_speed", "dead_zone", "toggle_button", "step_back_button",
               "step_forward_button"});
  r.Int(t, "joystick", "scrub_axis", 0, 255, &j->scrub_axis);
  r.Float(t, "joystick", "scrub_speed", 0.1, 64, &j->scrub_speed);
  r.Float(t, "joystick", "dead_zone", 0, 0.9, &j->dead_zone);
  r.Int(t, "joystick", "toggle_button", 0, 255, &j->toggle_button);
  r.Int(t, "joystick", "step_back_button", 0, 255, &j->step_back_button);
  r.Int(t, "joystick", "step_forward_button", 0, 255, &j->step_forward_button);
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

Status ValidateWallConfig(WallConfig* config) {
  WallConfig& c = *config;
  std::vector<std::string> errors;
  auto fail = [&](const std::string& key, const std::string& problem) {
    errors.push_back(Where(c, key) + ": " + problem);
  };
  const WallSettings& w = c.wall;
  const StreamSettings& s = c.stream;

  if (w.layout.columns < 1 || w.layout.rows < 1 || w.layout.columns > kMaxLayoutSide ||
      w.layout.rows > kMaxLayoutSide)
    fail("wall.columns", fmt::format("layout {} is outside 1x1..{}x{}", w.layout.ToString(),
                                     kMaxLayoutSide, kMaxLayoutSide));
  if (w.tile.width < 1 || w.tile.height < 1 || w.tile.width > kMaxTileDimension ||
      w.tile.height > kMaxTileDimension)
    fail("wall.tile_width",
         fmt::format("tile {}x{} is outside 1x1..32767x32767 (RFC 4175's 15-bit fields)",
                     w.tile.width, w.tile.height));
  if (!(w.fps > 0 && w.fps <= 1000)) fail("wall.fps", fmt::format("{} is outside 0..1000", w.fps));
  if (s.mtu < kMinMtu || s.mtu > kMaxMtu)
    fail("stream.mtu", fmt::format("MTU {} is outside {}..{} (a packet must hold the RTP and "
                                   "RFC 4175 headers and at least one pixel)",
                                   s.mtu, kMinMtu, kMaxMtu));
  if (s.max_burst_bytes > s.send_buffer)
    fail("stream.max_burst_bytes",
         fmt::format("{} bytes is more than the send buffer ({}): a burst must fit in it",
                     s.max_burst_bytes, s.send_buffer));
  if (s.send_buffer < kMinSocketBuffer || s.send_buffer > kMaxSocketBuffer)
    fail("stream.send_buffer", fmt::format("{} bytes is outside 64 KiB..2 GiB", s.send_buffer));
  if (s.receive_buffer < kMinSocketBuffer || s.receive_buffer > kMaxSocketBuffer)
    fail("stream.receive_buffer",
         fmt::format("{} bytes is outside 64 KiB..2 GiB", s.receive_buffer));
  if (s.payload_type < 96 || s.payload_type > 127)
    fail("stream.payload_type",
         fmt::format("{} is outside the dynamic range 96..127", s.payload_type));
  if (s.rtx_payload_type < 96 || s.rtx_payload_type > 127 || s.rtx_payload_type == s.payload_type)
    fail("stream.rtx_payload_type",
         fmt::format("{} is outside the dynamic range 96..127 or the stream's own payload type",
                     s.rtx_payload_type));
  if (!errors.empty()) return Status::InvalidArgument(JoinLines(errors));

  const uint32_t tiles = c.tile_count();
  if (c.nics.empty()) c.nics.push_back(Nic{"default", "", -1, 10});
  if (c.nodes.empty()) {
    DisplayNode local;
    local.name = "localhost";
    local.address = "127.0.0.1";
    for (uint32_t i = 0; i < tiles; ++i) local.tiles.push_back(TileId::FromIndex(i, w.layout));
    c.nodes.push_back(std::move(local));
  }

  std::map<std::string, uint32_t> nic_index;
  for (size_t i = 0; i < c.nics.size(); ++i) {
    const Nic& nic = c.nics[i];
    const std::string key = fmt::format("nic[{}]", i);
    if (!nic_index.emplace(nic.name, static_cast<uint32_t>(i)).second)
      fail(key + ".name", fmt::format("NIC '{}' is listed twice", nic.name));
    if (!nic.address.empty() && !IsIpLiteral(nic.address))
      fail(key + ".address", fmt::format("'{}' is not an IPv4 or IPv6 address", nic.address));
    if (!(nic.speed_gbps > 0)) fail(key + ".speed_gbps", "must be > 0");
  }

  std::vector<int> tile_node(tiles, -1);
  std::vector<int> pinned(tiles, -1);
  c.routes.assign(tiles, TileRoute{});
  std::set<std::string> node_names;
  std::map<std::pair<std::string, uint16_t>, std::string> used_ports;  // (address, port) -> tile
  for (size_t n = 0; n < c.nodes.size(); ++n) {
    const DisplayNode& node = c.nodes[n];
    const std::string key = fmt::format("node[{}]", n);
    if (!node_names.insert(node.name).second)
      fail(key + ".name", fmt::format("display node '{}' is listed twice", node.name));
    if (!IsIpLiteral(node.address) && !IsHostName(node.address))
      fail(key + ".address", fmt::format("'{}' is not an address or host name", node.address));
    if (node.tiles.empty()) fail(key + ".tiles", "a display node needs at least one tile");
    if (!node.ports.empty() && node.ports.size() != node.tiles.size())
      fail(key + ".ports",
           fmt::format("{} ports for {} tiles", node.ports.size(), node.tiles.size()));
    if (!node.displays.empty() && node.displays.size() != node.tiles.size())
      fail(key + ".displays",
           fmt::format("{} displays for {} tiles", node.displays.size(), node.tiles.size()));
    if (!node.sdp.empty() && node.sdp.size() != node.tiles.size())
      fail(key + ".sdp",
           fmt::format("{} SDP files for {} tiles (\"\" for a tile of our own stream)",
                       node.sdp.size(), node.tiles.size()));
    for (const auto& [name, list] : {std::pair{"any_ssrc", &node.any_ssrc},
                                     std::pair{"no_retransmission", &node.no_retransmission}}) {
      for (const TileId& id : *list) {
        if (std::find(node.tiles.begin(), node.tiles.end(), id) == node.tiles.end())
          fail(key + "." + name, fmt::format("tile {} is not one of this node's tiles", id.Name()));
      }
    }
    int nic = -1;
    if (!node.nic.empty()) {
      auto it = nic_index.find(node.nic);
      if (it == nic_index.end()) {
        std::string known;
        for (const Nic& x : c.nics) known += (known.empty() ? "" : ", ") + x.name;
        fail(key + ".nic",
             fmt::format("unknown NIC '{}' (the [[nic]] entries are: {})", node.nic, known));
      } else {
        nic = static_cast<int>(it->second);
      }
    }
    for (size_t i = 0; i < node.tiles.size(); ++i) {
      const TileId id = node.tiles[i];
      if (id.row >= w.layout.rows || id.column >= w.layout.columns) {
        fail(key + ".tiles",
             fmt::format("tile {} is outside the {} layout", id.Name(), w.layout.ToString()));
        continue;
      }
      const uint32_t t = id.Index(w.layout);
      if (tile_node[t] >= 0) {
        fail(key + ".tiles", fmt::format("tile {} is also on display node '{}'", id.Name(),
                                         c.nodes[static_cast<size_t>(tile_node[t])].name));
        continue;
      }
      tile_node[t] = static_cast<int>(n);
      pinned[t] = nic;
      TileRoute& route = c.routes[t];
      route.node = static_cast<uint32_t>(n);
      route.display = i < node.displays.size() ? node.displays[i] : static_cast<int>(i);
      route.sdp = i < node.sdp.size() ? node.sdp[i] : "";
      route.any_ssrc =
          std::find(node.any_ssrc.begin(), node.any_ssrc.end(), id) != node.any_ssrc.end();
      route.retransmission = s.retransmission && route.sdp.empty() &&
                             std::find(node.no_retransmission.begin(), node.no_retransmission.end(),
                                       id) == node.no_retransmission.end();
      if (i < node.ports.size()) {
        route.port = node.ports[i];
      } else if (uint32_t{s.port_base} + t > 65535) {
        fail("stream.port_base", fmt::format("port {} + tile {} is beyond 65535", s.port_base, t));
        continue;
      } else {
        route.port = static_cast<uint16_t>(s.port_base + t);
      }
      auto [it, fresh] = used_ports.emplace(std::make_pair(node.address, route.port), id.Name());
      if (!fresh)
        fail(key + ".ports", fmt::format("port {} on {} is used by tiles {} and {}", route.port,
                                         node.address, it->second, id.Name()));
      const bool same_host =
          node.address == c.control.listen_address || IsWildcard(c.control.listen_address) ||
          (IsLoopbackAddress(node.address) && IsLoopbackAddress(c.control.listen_address));
      if (same_host && route.port == c.control.port)
        fail("control.port", fmt::format("port {} is also the port of tile {} on {}", route.port,
                                         id.Name(), node.address));
    }
  }
  for (uint32_t t = 0; t < tiles; ++t) {
    if (tile_node[t] < 0)
      fail("node",
           fmt::format("tile {} is on no display node", TileId::FromIndex(t, w.layout).Name()));
  }

  if (!IsIpLiteral(c.control.listen_address) && c.control.listen_address != "localhost")
    fail("control.listen",
         fmt::format("'{}' is not an IPv4 or IPv6 address", c.control.listen_address));
  if (!IsLoopbackAddress(c.control.listen_address) && c.control.token_file.empty())
    fail("control.token_file", fmt::format("the control listener on {} is not loopback: a "
                                           "token_file is required",
                                           c.control.listen_address));
  if (IsWildcard(c.control.listen_address) && c.control.address.empty())
    fail("control.address",
         fmt::format("the control listener is on every address ({}): say which one "
                     "receivers and wallctl connect to",
                     c.control.listen_address));
  if (!errors.empty()) return Status::InvalidArgument(JoinLines(errors));

  std::vector<double> bps(tiles, w.tile_bits_per_second());
  std::vector<double> speeds;
  for (const Nic& nic : c.nics) speeds.push_back(nic.speed_gbps * 1e9);
  const std::vector<uint32_t> nic = AssignNics(pinned, bps, speeds);
  for (uint32_t t = 0; t < tiles; ++t) c.routes[t].nic = nic[t];
  return Status::Ok();
}

Result<WallConfig> ParseWallConfig(std::string_view toml_text, std::string_view source) {
  WallConfig c;
  c.source = std::string(source);
  toml::table root;
  try {
    root = toml::parse(toml_text, source);
  } catch (const toml::parse_error& e) {
    return Status::InvalidArgument(
        fmt::format("{}:{}: TOML syntax: {}", source, e.source().begin.line, e.description()));
  }
  TomlReader r(c.source, &c.key_lines);
  r.CheckKeys(root, "", {"wall", "stream", "nic", "node", "control", "sync", "joystick"});
  if (const toml::table* t = Section(r, root, "wall")) ReadWall(r, *t, &c.wall);
  if (const toml::table* t = Section(r, root, "stream")) ReadStream(r, *t, &c.stream);
  if (const toml::table* t = Section(r, root, "control")) ReadControl(r, *t, &c.control);
  if (const toml::table* t = Section(r, root, "sync")) ReadSync(r, *t, &c.sync);
  if (const toml::table* t = Section(r, root, "joystick")) ReadJoystick(r, *t, &c.joystick);
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
