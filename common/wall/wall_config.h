// The wall configuration: the wall (layout, tile size, bezels, fps), the
// stream settings, the streaming servers and their NICs, the display nodes
// and the control listener, loaded from TOML (see docs/config.md) or built
// from defaults.
//
// Loading validates everything and resolves each tile's route (display node,
// address, port, display index, NIC); every problem is reported with the
// file, the line, the key and what is wrong. A WallConfig is a plain value:
// build it once at start-up and share it read-only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/base/result.h"
#include "common/wall/layout.h"
#include "common/wire/packetizer.h"
#include "common/wire/rfc4175.h"

namespace tilestream {

struct WallSettings {
  Layout layout{5, 3};
  TileGeometry tile{640, 400};
  uint32_t bezel_x = 0;  // source pixels hidden between two tiles side by side
  uint32_t bezel_y = 0;  // ... and between two tiles one above the other
  double fps = 30;

  // The whole-wall source frame, bezels included.
  uint32_t source_width() const {
    return layout.columns * tile.width + (layout.columns - 1) * bezel_x;
  }
  uint32_t source_height() const { return layout.rows * tile.height + (layout.rows - 1) * bezel_y; }
  // Payload bit rate of one tile stream at fps.
  double tile_bits_per_second() const { return tile.frame_bytes() * 8.0 * fps; }
};

struct PixelOrigin {
  uint32_t x = 0;
  uint32_t y = 0;
};

// Top-left pixel of tile `tile_index` in the wall's source frame (bezels
// included): where the cutter takes the tile from and the mosaic puts it.
PixelOrigin TileOrigin(const WallSettings& wall, uint32_t tile_index);

struct StreamSettings {
  uint32_t mtu = 9000;
  Packing packing = Packing::kPacked;
  size_t send_buffer = 4718592;      // SO_SNDBUF per tile stream (4.5 MiB)
  size_t receive_buffer = 67108864;  // SO_RCVBUF per tile stream (64 MiB)
  bool pacing = true;
  // Pacing by time (common/send/pacer.h): a paced burst is max_burst_bytes of
  // packets, or the packets of one quantum where that is less.
  uint32_t pacing_quantum_us = 10000;
  uint64_t max_burst_bytes = 512 << 10;
  uint8_t payload_type = kDefaultPayloadType;
  uint16_t port_base = 50000;
  // Retransmission of lost packets (RFC 4585 NACK, RFC 4588 RTX; see
  // docs/protocol.md): on for our own streams unless switched off here or
  // per tile ([[node]] no_retransmission). Retransmissions are capped at
  // this share of the stream's bytes.
  bool retransmission = true;
  double retransmission_share = 0.05;
  uint8_t rtx_payload_type = 97;
  // A lost packet is asked for this long after its gap shows (a packet a
  // later one passed within it was reordered, not lost): for paths that
  // reorder (docs/operations.md, "A wall far from its server").
  double reorder_ms = 0;  // tile i goes to port_base + i unless a node says otherwise
};

// A streaming server of a wall too big for one ([[server]], docs/scaling.md).
// Without [[server]] entries the wall has one, unnamed: whatever host the
// streamer runs on.
struct Server {
  std::string name;           // its host name, as mpirun and gethostname know it; "": any
  std::string store;          // absolute directory of its tile stores ("": the working one)
  std::vector<TileId> tiles;  // its tiles; none listed: balanced over such servers
};

// Open MPI's own traffic ([mpi]): on a wall of several servers it belongs on
// the management network, never on the media NICs.
struct MpiSettings {
  std::string network;  // IPv4 subnet as "10.99.0.0/24"; "": Open MPI's choice
};

struct Nic {
  std::string name;     // interface, e.g. "eth2"; used for SO_BINDTODEVICE
  std::string address;  // source address to bind; empty: the kernel chooses
  int numa_node = -1;   // -1: unknown / no NUMA
  // What it carries. 0 (unset): the kernel's speed of the interface, where
  // the streamer runs (common/net/link_speed.h), unknown for loopback or a
  // NIC that reports none; set, it overrides the kernel's.
  double speed_gbps = 0;
  // The weight the config's balancing of tiles over NICs gives it: its
  // speed, or 10 Gbit/s where none is set (every such NIC alike).
  double balance_gbps() const { return speed_gbps > 0 ? speed_gbps : 10; }
  std::string server_name;  // the [[server]] it is on ("": the only one)
  uint32_t server = 0;      // index into WallConfig::servers; filled by Validate
};

struct DisplayNode {
  std::string name;
  std::string address;
  std::vector<TileId> tiles;    // in the order of the config
  std::vector<uint16_t> ports;  // per tile
  std::vector<int> displays;    // per tile: SDL display index
  std::string nic;              // pins the node's tiles to this NIC; empty: balanced
  // Tiles fed by another sender than our streamer (docs/config.md):
  std::vector<std::string> sdp;  // per tile: an SDP file describing its stream, or ""
  std::vector<TileId> any_ssrc;  // these tiles accept any SSRC (lock onto the first sender)
  std::vector<TileId> no_retransmission;  // these tiles neither ask for nor get retransmissions
};

struct ControlSettings {
  std::string listen_address = "127.0.0.1";
  // Where receivers and wallctl connect; empty: listen_address (required
  // when that is a wildcard).
  std::string address;
  uint16_t port = 7470;
  std::string token_file;         // required unless listen_address is loopback
  uint32_t idle_timeout_s = 600;  // a command connection without a line this long is closed
  uint32_t line_timeout_s = 5;    // a line not ended this long after its first byte closes it
  // Connections at once (commands and sync); one more is refused, unless it
  // comes from a display node's address: those may have two each beyond it.
  uint32_t max_clients = 64;
  uint32_t max_line_bytes = 4096;  // a longer line closes its connection

  const std::string& client_address() const { return address.empty() ? listen_address : address; }
};

// The web side (docs/control.md, docs/operations.md): the coordinator's
// panel, REST API and /metrics, and each display node's /metrics. Remote
// access needs control.token_file (as "Authorization: Bearer TOKEN").
struct HttpSettings {
  std::string listen_address = "127.0.0.1";
  uint16_t port = 7480;  // 0: no HTTP on the coordinator
  std::string node_listen_address = "127.0.0.1";
  uint16_t node_port_base = 7481;             // display node i serves /metrics here + i; 0: none
  uint32_t max_clients = 8;                   // requests served at once; more wait their turn
  uint32_t max_queued = 64;                   // requests waiting their turn; more get 503
  uint32_t max_connections = 256;             // past it the stalest gives its place up
  uint32_t max_connections_per_address = 32;  // more from one address are refused
  uint32_t max_body_bytes = 4096;             // a longer request body is refused (413)
  uint32_t header_timeout_ms = 2000;          // a request's line and headers, from its start
  uint32_t timeout_s = 5;                     // a whole request, from its start; a reply's writing
  uint32_t keep_alive_s = 5;                  // an idle connection between requests
  uint32_t requests_per_second_per_address = 50;  // more get 429; 0: no limit
  uint32_t thumbnail_period_ms = 1000;            // tiles' live pictures this often; 0: none

  // Display node `node`'s /metrics port, or 0.
  uint16_t node_port(uint32_t node) const {
    return node_port_base == 0 ? 0 : static_cast<uint16_t>(node_port_base + node);
  }
};

// What joystick events do (docs/control.md): the [joystick] table.
struct JoystickMap {
  uint32_t scrub_axis = 0;
  double scrub_speed = 8;   // frames per tick at full deflection
  double dead_zone = 0.15;  // |value| below this is the centre
  uint32_t toggle_button = 0;
  uint32_t step_back_button = 4;
  uint32_t step_forward_button = 5;
  uint32_t previous_button = 6;  // the playlist's movie before
  uint32_t next_button = 7;      // and after
};

// Swap sync (docs/control.md): a tick is shown when every tile has it, or at
// its deadline is skipped on every tile (or shown as it is, with `partial`).
struct SyncSettings {
  bool enabled = true;
  bool partial = false;      // policy "partial"; default "skip"
  uint32_t deadline_ms = 0;  // after the tick's frame has been sent; 0: one frame interval
  uint32_t wait_ms = 2000;   // before tick 0, for every display node to join
  // Playout latency (docs/control.md, "Playout latency"): every tile shows
  // a tick this long after its frame has been sent, at one moment of the
  // nodes' synchronised clocks, the decision taken before then. kNoLatency:
  // shown as soon as decided (the LAN's way). kAutoLatency: from the
  // round trips measured on the sync connections, at most max_latency_ms.
  static constexpr int32_t kNoLatency = -1;
  static constexpr int32_t kAutoLatency = -2;
  int32_t latency = kNoLatency;  // ms, or one of the above
  uint32_t max_latency_ms = 500;
  // With a playout latency, the ticks decided at the wall's side: a display
  // node leads (common/control/tick_leader.h), the reports and decisions
  // cross the nodes' LAN. false ("server"): the coordinator decides.
  bool decide_at_wall = true;
  bool timed() const { return latency != kNoLatency; }
  // The most a tick may wait after its frame is sent: the display nodes'
  // frame queues and the senders' retransmission history hold that long.
  int64_t latency_bound_ns() const {
    if (latency == kAutoLatency) return int64_t{max_latency_ms} * 1'000'000;
    return latency >= 0 ? int64_t{latency} * 1'000'000 : 0;
  }

  // From the start of a tick's send to its deadline (with a latency: to
  // its presentation at the latest).
  int64_t deadline_after_tick_ns(double fps) const {
    const double interval_ns = 1e9 / fps;
    if (timed()) return static_cast<int64_t>(interval_ns) + latency_bound_ns();
    return static_cast<int64_t>(interval_ns + (deadline_ms ? deadline_ms * 1e6 : interval_ns));
  }
  // Frames a synced tile keeps for the release of their tick: as many as
  // arrive until a tick's deadline, and one more (3 to 32). A longer
  // deadline ([sync] deadline_ms) that the queue did not follow dropped
  // frames the wall then released: "missing" on a loaded machine; and the
  // wall's simulation found a 60 fps wall with an auto latency over 250 ms
  // (16 frames, the bound before) missing every frame it released.
  size_t queue_frames(double fps) const {
    const double frames = static_cast<double>(deadline_after_tick_ns(fps)) * fps / 1e9;
    return std::clamp<size_t>(static_cast<size_t>(std::ceil(frames)) + 1, 3, 32);
  }
};

// Where one tile's stream goes and leaves from.
struct TileRoute {
  uint32_t node = 0;  // index into WallConfig::nodes
  uint16_t port = 0;
  int display = 0;
  uint32_t nic = 0;     // index into WallConfig::nics
  uint32_t server = 0;  // index into WallConfig::servers: its NIC's
  std::string sdp;      // the SDP file describing its stream (as written in the config), or ""
  bool any_ssrc = false;
  // Lost packets are asked for again and retransmitted: our own stream (no
  // SDP file) with retransmission on for the wall and this tile.
  bool retransmission = false;
};

// [[live]]: a live source (issue 44; docs/live.md), played like a movie of
// the library by its name: the RTP stream that its SDP file describes,
// received by the streamer, scaled onto the wall.
struct LiveSourceSettings {
  std::string name;          // as a movie's (ValidMovieName)
  std::string sdp;           // the SDP file's path
  std::string fit = "bars";  // "bars" (aspect kept) or "fill"
  // Seconds the last picture is held once the source stops sending; then
  // the slate ([library] slate, or a black picture naming the source).
  double hold_s = 10;
  // Where the SDP names a multicast group: the server's NIC to join it on
  // (its name, or its IPv4 address); empty: the routing table's choice.
  std::string interface;
};

struct WallConfig {
  std::string source = "<defaults>";  // file the config came from
  WallSettings wall;
  StreamSettings stream;
  std::vector<Server> servers;  // at least one after Validate
  std::vector<Nic> nics;
  std::vector<DisplayNode> nodes;
  ControlSettings control;
  HttpSettings http;
  // [library] path: the movie library (docs/control.md, `movies`); empty: none.
  std::string library_path;
  // [library] slate: the picture an idle wall shows (PNG or PPM, scaled to
  // fit, common/image/slate.h); empty: black.
  std::string slate_path;
  std::vector<LiveSourceSettings> live;
  SyncSettings sync;
  JoystickMap joystick;
  MpiSettings mpi;
  std::vector<TileRoute> routes;  // per tile index; filled by Validate
  // Line of each key in `source` ("node[1].tiles" -> 42), for messages.
  std::vector<std::pair<std::string, int>> key_lines;

  uint32_t tile_count() const { return wall.layout.tile_count(); }
  bool several_servers() const { return servers.size() > 1; }
  // NIC `nic` as reports name it: "eth2", or "stream2/eth2" on several servers.
  std::string nic_label(uint32_t nic) const {
    return several_servers() ? servers[nics[nic].server].name + "/" + nics[nic].name
                             : nics[nic].name;
  }
  size_t max_udp_payload() const { return MaxUdpPayloadForMtu(stream.mtu); }
};

// The defaults: `layout` of 640x400 tiles at 30 fps, one node "localhost"
// on 127.0.0.1 serving every tile, one NIC "default" chosen by the kernel.
// Validated.
WallConfig DefaultWallConfig(Layout layout);

// Parses TOML text; `source` names it in messages. Missing sections take the
// defaults above (no [[node]]: every tile to localhost). Validated.
Result<WallConfig> ParseWallConfig(std::string_view toml_text, std::string_view source);
Result<WallConfig> LoadWallConfig(const std::string& path);

// Checks the cross-field rules (tiles inside the layout and on exactly one
// node and one server, unique names, no port clash, known NICs, MTU big
// enough, control token for a non-loopback listener) and fills `routes`,
// assigning NICs.
// Used after command-line flags changed a loaded config.
Status ValidateWallConfig(WallConfig* config);

bool IsLoopbackAddress(std::string_view address);

// The RTP SSRC of tile `tile_index`: "ts" and the index, stable for a wall,
// so that receivers and SDP files know it without being told.
inline uint32_t TileSsrc(uint32_t tile_index) { return 0x74730000u | (tile_index & 0xffff); }
// Its retransmission stream's SSRC ("tr"), and the SSRC its receiver's
// NACKs come from ("td").
inline uint32_t TileRtxSsrc(uint32_t tile_index) { return 0x74720000u | (tile_index & 0xffff); }
inline uint32_t TileReceiverSsrc(uint32_t tile_index) {
  return 0x74640000u | (tile_index & 0xffff);
}

}  // namespace tilestream
