#include "common/wall/config_check.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "common/base/json_text.h"
#include "common/base/words.h"
#include "common/wall/ipv4_subnet.h"
#include "common/wall/toml_reader.h"

namespace tilestream {
namespace {

constexpr uint32_t kMinMtu = 576;  // the smallest IPv4 MTU; one RGB pixel needs 23 bytes
constexpr uint32_t kMaxMtu = 65535;
constexpr size_t kMinSocketBuffer = size_t{64} << 10;
constexpr size_t kMaxSocketBuffer = size_t{2} << 30;

// "file:line: key" for messages about a key of the config.
std::string Where(const WallConfig& c, const std::string& key) {
  for (const auto& [k, line] : c.key_lines)
    if (k == key && line > 0) return fmt::format("{}:{}: {}", c.source, line, key);
  return fmt::format("{}: {}", c.source, key);
}

}  // namespace

bool IsIpLiteral(const std::string& a) {
  unsigned char buf[16];
  return inet_pton(AF_INET, a.c_str(), buf) == 1 || inet_pton(AF_INET6, a.c_str(), buf) == 1;
}

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

Status ConfigCheck::status() const {
  return ok() ? Status::Ok() : Status::InvalidArgument(JoinLines(errors_));
}

void ConfigCheck::Fail(const std::string& key, const std::string& problem) {
  errors_.push_back(Where(c_, key) + ": " + problem);
}

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

// Live sources: named as movies are, each name once, an SDP file each,
// bars or fill.
void ConfigCheck::Live() {
  for (size_t i = 0; i < c_.live.size(); ++i) {
    const LiveSourceSettings& l = c_.live[i];
    const std::string key = fmt::format("live[{}]", i);
    if (!ValidMovieName(l.name))
      Fail(key + ".name", fmt::format("'{}' is not a name: 1 to 128 of A-Z a-z 0-9 . _ -, not "
                                      "starting with a dot",
                                      Printable(l.name)));
    for (size_t j = 0; j < i; ++j)
      if (c_.live[j].name == l.name)
        Fail(key + ".name", fmt::format("'{}' names live[{}] already", l.name, j));
    if (l.sdp.empty()) Fail(key + ".sdp", "a live source needs its SDP file");
    if (l.fit != "bars" && l.fit != "fill")
      Fail(key + ".fit", fmt::format("'{}' is not a fit (bars or fill)", Printable(l.fit)));
  }
}

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
  check.Live();
  if (!check.ok()) return check.status();
  check.AssignNicsToTiles();
  return check.status();
}

}  // namespace tilestream
