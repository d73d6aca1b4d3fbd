#include "common/check/preflight.h"

#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>

#include <fstream>

#include "common/base/aligned_buffer.h"
#include "common/base/clock.h"
#include "common/net/line_channel.h"
#include "common/net/udp_socket.h"
#include "common/wall/server_hosts.h"
#include "common/wall/token_file.h"

namespace tilestream {
namespace {

using Level = Finding::Level;

// The first number in a /proc or /sys file, or -1.
int64_t ReadNumber(const std::string& path) {
  std::ifstream in(path);
  int64_t v = -1;
  if (!(in >> v)) return -1;
  return v;
}

void CheckSysctl(const PreflightOptions& o, const std::string& name, int64_t want,
                 const std::string& why, std::vector<Finding>* out) {
  std::string path = o.proc_root + "/sys/";
  for (char c : name) path += c == '.' ? '/' : c;
  const int64_t have = ReadNumber(path);
  if (have < 0) {
    out->push_back({Level::kWarn, fmt::format("cannot read {} ({})", name, path), ""});
  } else if (have < want) {
    out->push_back(
        {Level::kWarn, fmt::format("{} is {}, below the {} {}", name, have, want, why),
         fmt::format("sysctl -w {}={}  (and in /etc/sysctl.d/90-tilestream.conf)", name, want)});
  } else {
    out->push_back({Level::kOk, fmt::format("{} is {} (>= {})", name, have, want), ""});
  }
}

void CheckInterface(const PreflightOptions& o, const Nic& nic, uint32_t mtu,
                    std::vector<Finding>* out) {
  if (nic.name == "default") return;  // the kernel chooses: nothing to check
  const std::string dir = o.sys_root + "/class/net/" + nic.name;
  const int64_t have = ReadNumber(dir + "/mtu");
  if (have < 0) {
    out->push_back(
        {Level::kFail, fmt::format("interface {} does not exist here", nic.name),
         fmt::format("check [[nic]] name = \"{}\" in the config (ip -br link lists them)",
                     nic.name)});
    return;
  }
  if (have < mtu) {
    out->push_back({Level::kFail,
                    fmt::format("interface {} has MTU {}, the wall needs {}", nic.name, have, mtu),
                    fmt::format("ip link set {} mtu {}", nic.name, mtu)});
  } else {
    out->push_back({Level::kOk, fmt::format("interface {} has MTU {}", nic.name, have), ""});
  }
  const int64_t numa = ReadNumber(dir + "/device/numa_node");
  if (nic.numa_node >= 0 && numa >= 0 && numa != nic.numa_node) {
    out->push_back({Level::kWarn,
                    fmt::format("interface {} is on NUMA node {}, the config says {}", nic.name,
                                numa, nic.numa_node),
                    fmt::format("numa_node = {} in its [[nic]]", numa)});
  } else if (numa >= 0) {
    out->push_back(
        {Level::kOk, fmt::format("interface {} is on NUMA node {}", nic.name, numa), ""});
  } else {
    out->push_back({Level::kOk,
                    fmt::format("interface {} has no NUMA node (virtual, or one node)", nic.name),
                    ""});
  }
}

// Whether address:port can be bound now (type SOCK_STREAM or SOCK_DGRAM).
bool PortFree(const std::string& address, uint16_t port, int type) {
  auto a = SocketAddress::Resolve(address, port);
  if (!a.ok()) return false;
  UniqueFd fd(socket(a->storage.ss_family, type | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return false;
  const int one = 1;
  if (type == SOCK_STREAM) setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  return bind(fd.get(), a->sockaddr_ptr(), a->length) == 0;
}

// On a wall of several servers, which one this host is (a finding either
// way): its index, or -1.
int ThisServer(const WallConfig& c, const PreflightOptions& o, std::vector<Finding>* out) {
  if (!c.several_servers()) return 0;
  const std::string host = o.host.empty() ? ThisHost() : o.host;
  const int server = ServerOfHost(c, host);
  std::string names;
  for (const Server& s : c.servers) names += (names.empty() ? "" : ", ") + s.name;
  if (server < 0) {
    out->push_back({Level::kFail,
                    fmt::format("this host ('{}') is none of the wall's servers ({})", host, names),
                    "run the check on each server, whose host name a [[server]] names"});
  } else {
    out->push_back({Level::kOk,
                    fmt::format("this host ('{}') is server '{}' of {}", host,
                                c.servers[static_cast<size_t>(server)].name, names),
                    ""});
  }
  return server;
}

}  // namespace

std::vector<Finding> CheckStreamerHost(const WallConfig& c, const PreflightOptions& o) {
  std::vector<Finding> out;
  const int server = ThisServer(c, o, &out);
  if (server < 0) return out;
  CheckSysctl(o, "net.core.wmem_max", static_cast<int64_t>(c.stream.send_buffer),
              "bytes of send buffer a tile stream asks for ([stream] send_buffer)", &out);
  for (const Nic& nic : c.nics)
    if (static_cast<int>(nic.server) == server) CheckInterface(o, nic, c.stream.mtu, &out);
  if (server > 0) return out;  // the coordinator's listener and token are on the first
  if (PortFree(c.control.listen_address, c.control.port, SOCK_STREAM)) {
    out.push_back(
        {Level::kOk,
         fmt::format("control port {}:{} is free", c.control.listen_address, c.control.port), ""});
  } else {
    out.push_back(
        {Level::kFail,
         fmt::format("control port {}:{} cannot be bound (in use, or not an address of this host)",
                     c.control.listen_address, c.control.port),
         fmt::format("ss -ltnp 'sport = :{}' shows who has it; or change [control] listen/port",
                     c.control.port)});
  }
  if (!c.control.token_file.empty()) {
    auto t = ReadToken(c.control.token_file);
    out.push_back(
        t.ok() ? Finding{Level::kOk, "token file " + c.control.token_file + " is readable", ""}
               : Finding{Level::kFail, t.status().message(),
                         "openssl rand -hex 16 > " + c.control.token_file + " && chmod 640 " +
                             c.control.token_file});
  }
  return out;
}

std::vector<Finding> CheckReceiverHost(const WallConfig& c, uint32_t node,
                                       const PreflightOptions& o) {
  std::vector<Finding> out;
  CheckSysctl(o, "net.core.rmem_max", static_cast<int64_t>(c.stream.receive_buffer),
              "bytes of receive buffer a tile asks for ([stream] receive_buffer)", &out);
  CheckSysctl(o, "net.core.netdev_max_backlog", 250000, "packets a 10GbE burst of frames can need",
              &out);
  const DisplayNode& n = c.nodes[node];
  for (uint32_t t = 0; t < c.routes.size(); ++t) {
    if (c.routes[t].node != node) continue;
    const uint16_t port = c.routes[t].port;
    const std::string tile = TileId::FromIndex(t, c.wall.layout).Name();
    if (PortFree(n.address, port, SOCK_DGRAM)) {
      out.push_back(
          {Level::kOk, fmt::format("tile {} port {}:{} is free", tile, n.address, port), ""});
    } else {
      out.push_back(
          {Level::kFail,
           fmt::format("tile {} port {}:{} cannot be bound (in use, or {} is not this host's)",
                       tile, n.address, port, n.address),
           fmt::format("ss -lunp 'sport = :{}' shows who has it", port)});
    }
  }
  return out;
}

std::vector<Finding> CheckStore(const MovieManifest& movie, const WallConfig& c, uint32_t tile,
                                uint32_t frames) {
  std::vector<Finding> out;
  auto reader = TileReader::Open(movie, tile, /*direct=*/true);
  if (!reader.ok()) {
    out.push_back({Level::kFail, reader.status().message(),
                   "check --movie and the tile files (wallcut makes them)"});
    return out;
  }
  if (reader->direct()) {
    out.push_back({Level::kOk, "the tile store takes O_DIRECT reads", ""});
  } else {
    out.push_back({Level::kWarn,
                   "the tile store's file system refuses O_DIRECT: reads go through the page cache",
                   "put the movie on XFS or ext4 (docs/operations.md)"});
  }
  auto buffer = AlignedBuffer::Allocate(movie.frame_stride);
  if (!buffer.ok()) {
    out.push_back({Level::kFail, buffer.status().message(), ""});
    return out;
  }
  const uint64_t n = std::min<uint64_t>(frames, movie.frames);
  const int64_t t0 = MonotonicNs();
  for (uint64_t f = 0; f < n; ++f) {
    if (Status s = reader->ReadFrame(f, buffer->span()); !s.ok()) {
      out.push_back({Level::kFail, fmt::format("reading tile {}: {}", tile, s.message()), ""});
      return out;
    }
  }
  const double seconds = (MonotonicNs() - t0) / 1e9;
  const double rate = n * static_cast<double>(movie.frame_stride) / std::max(seconds, 1e-9);
  const double need = c.wall.tile.frame_bytes() * c.wall.fps;
  const std::string what =
      fmt::format("tile {} reads at {:.0f} MB/s ({} frames); one tile needs {:.0f} MB/s at {} fps",
                  tile, rate / 1e6, n, need / 1e6, c.wall.fps);
  if (rate < 1.5 * need) {
    out.push_back({Level::kWarn, what + ": less than 1.5x, no headroom",
                   "spread the tile files over more SSDs (wallcut --spread)"});
  } else {
    out.push_back({Level::kOk, what, ""});
  }
  return out;
}

std::string FormatFindings(const std::vector<Finding>& findings, bool* any_failed) {
  std::string s;
  *any_failed = false;
  for (const Finding& f : findings) {
    static constexpr const char* kTags[] = {"ok  ", "WARN", "FAIL"};
    s += fmt::format("{} {}\n", kTags[static_cast<int>(f.level)], f.what);
    if (!f.fix.empty()) s += fmt::format("     fix: {}\n", f.fix);
    *any_failed = *any_failed || f.level == Level::kFail;
  }
  return s;
}

}  // namespace tilestream
