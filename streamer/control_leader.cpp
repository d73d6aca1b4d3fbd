// The swap sync decided at the wall's side (common/control/tick_leader.h;
// streamer/control_server.h): the control server names a display node the
// leader, sends it each tick the coordinator opens, takes its decisions as
// the master's own, and gives it up when they stop coming.
#include <arpa/inet.h>
#include <spdlog/spdlog.h>
#include <sys/random.h>

#include <algorithm>

#include "common/net/datagram_port.h"
#include "streamer/control_server.h"

namespace tilestream {
namespace {

// The numeric address of where a node's datagrams come from: its LAN
// socket is on the same host.
std::string HostOf(const sockaddr_storage& a) {
  char buf[INET6_ADDRSTRLEN] = "";
  if (a.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&a)->sin_addr, buf, sizeof buf);
  else
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&a)->sin6_addr, buf, sizeof buf);
  return buf;
}

}  // namespace

// A node's "lan PORT" (then it may lead, or its leader learns where it
// is), and the leader's decisions.
bool ControlServer::HandleLeaderLine(uint64_t id, Client& c, std::string_view line) {
  if (auto d = ParseDecided(line, config_.tile_count())) {
    if (id == leader_id_) sync_->Adopt(*d);  // the master's Decide sends it on
    return true;
  }
  const auto port = ParseStamp("lan", line);
  if (!port) return false;
  if (*port <= 0 || *port > 65535) return true;
  c.lan_port = static_cast<uint16_t>(*port);
  if (leader_node_ >= 0)
    SendPeer(c);
  else
    ChooseLeader();
  return true;
}

// The first node in the config's order that may lead: its datagrams and
// its LAN socket known, never given up. Only with a playout latency (the
// moments the leader decides against) and `decide = "wall"`.
void ControlServer::ChooseLeader() {
  if (leader_node_ >= 0 || no_leader_ || !config_.sync.timed() || !config_.sync.decide_at_wall ||
      config_.tile_count() > kMaxLedTiles)
    return;
  Client* best = nullptr;
  for (auto& [id, c] : clients_) {
    if (!MayLead(c) || (best && best->node < c.node)) continue;
    best = &c;
    leader_id_ = id;
  }
  if (!best) return;
  if (wall_key_ == 0 && getrandom(&wall_key_, sizeof wall_key_, 0) != sizeof wall_key_) return;
  leader_node_ = best->node;
  leader_carrier_.Clear();
  spdlog::info("swap sync: display node {} decides the ticks, at the wall's side",
               config_.nodes[leader_node_].name);
  for (auto& [id, c] : clients_)
    if (c.node >= 0) SayLeader(id, c);
  for (const auto& [id, c] : clients_)
    if (c.node >= 0 && c.lan_port > 0 && c.udp_peer_length > 0) SendPeer(c);
}

// Who leads, by line and by datagram (a lost segment must not keep the
// reports from the leader while TCP repairs it): "lead" to the leader,
// "leader" to the others.
void ControlServer::SayLeader(uint64_t id, Client& c) {
  std::string line;
  if (leader_node_ < 0) {
    line = FormatLeader({});
  } else if (id == leader_id_) {
    line = FormatLead({wall_key_, config_.tile_count(), config_.sync.partial});
  } else {
    const Client& l = clients_.at(leader_id_);
    line = FormatLeader({LanPeer{HostOf(l.udp_peer), l.lan_port}, wall_key_});
  }
  Send(id, line);
  if (c.udp_peer_length > 0)
    SendCopies(sync_udp_.get(), FormatSyncDatagram(c.udp_key, line), kSyncCopies, &c.udp_peer,
               c.udp_peer_length);
}

// Where node c's LAN socket is, for the leader's decisions.
void ControlServer::SendPeer(const Client& c) {
  if (leader_node_ < 0 || c.lan_port == 0 || c.udp_peer_length == 0) return;
  Send(leader_id_, FormatPeer({static_cast<uint32_t>(c.node), {HostOf(c.udp_peer), c.lan_port}}));
}

void ControlServer::ToLeader(const std::string& line) {
  if (leader_node_ < 0) return;
  Client& l = clients_.at(leader_id_);
  Send(leader_id_, line);
  leader_carrier_.Add(line);
  if (l.udp_peer_length > 0)
    SendCopies(sync_udp_.get(), leader_carrier_.Datagram(l.udp_key), kSyncCopies, &l.udp_peer,
               l.udp_peer_length);
}

void ControlServer::SendOpen(const OpenedTick& t) { ToLeader(FormatOpen(t)); }

void ControlServer::GiveUpLeader(std::string_view why) {
  if (leader_node_ < 0) return;
  const uint64_t skipped = sync_->AbandonLed();
  spdlog::warn(
      "swap sync: display node {} no longer decides the ticks ({}); {} ticks it had not decided "
      "are skipped",
      config_.nodes[leader_node_].name, why, skipped);
  if (const auto it = clients_.find(leader_id_); it != clients_.end()) it->second.demoted = true;
  leader_node_ = -1;
  leader_id_ = 0;
  ChooseLeader();
  if (leader_node_ >= 0) return;
  for (auto& [id, c] : clients_)
    if (c.node >= 0) SayLeader(id, c);
}

void ControlServer::StopLeading(std::string_view why) {
  if (leader_node_ < 0) return;
  spdlog::error("swap sync: the coordinator decides the ticks from now on: {}", why);
  no_leader_ = true;
  GiveUpLeader("stopped");
}

}  // namespace tilestream
