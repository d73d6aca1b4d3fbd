#include "common/wall/wall_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "common/wall/toml_reader.h"

namespace tilestream {
namespace {

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
  r.CheckKeys(
      t, "sync",
      {"enabled", "policy", "deadline_ms", "wait_ms", "latency_ms", "max_latency_ms", "decide"});
  r.Bool(t, "sync", "enabled", &s->enabled);
  std::string policy;
  r.String(t, "sync", "policy", &policy);
  if (policy == "partial")
    s->partial = true;
  else if (!policy.empty() && policy != "skip")
    r.Error(t.get("policy"), "sync.policy",
            fmt::format("'{}' is not a policy (skip or partial)", policy));
  std::string decide;
  r.String(t, "sync", "decide", &decide);
  if (decide == "server")
    s->decide_at_wall = false;
  else if (!decide.empty() && decide != "wall")
    r.Error(t.get("decide"), "sync.decide",
            fmt::format("'{}' is not where ticks are decided (wall or server)", decide));
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

Result<WallConfig> ParseWallConfig(std::string_view toml_text, std::string_view source) {
  WallConfig c;
  c.source = std::string(source);
  auto parsed = ParseToml(toml_text, source);
  if (!parsed.ok()) return parsed.status();
  const toml::table& root = *parsed;
  TomlReader r(c.source, &c.key_lines);
  r.CheckKeys(root, "",
              {"wall", "stream", "server", "nic", "node", "control", "http", "sync", "joystick",
               "mpi", "library", "live"});
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
  TableArray(r, root, "live", [&](const toml::table& t, const std::string& path) {
    r.CheckKeys(t, path, {"name", "sdp", "fit", "hold_s", "interface"});
    LiveSourceSettings& l = c.live.emplace_back();
    r.String(t, path, "name", &l.name);
    r.String(t, path, "sdp", &l.sdp);
    r.String(t, path, "fit", &l.fit);
    r.Float(t, path, "hold_s", 0, 86400, &l.hold_s);
    r.String(t, path, "interface", &l.interface);
  });
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
