// The display node's part in the decision at the wall's side
// (receiver/sync_client.h; common/control/tick_leader.h): its LAN socket,
// who leads, its reports' way to the leader, and, leading, the ticks it
// decides.
#include <sys/socket.h>

#include <array>

#include "common/net/datagram_port.h"
#include "receiver/sync_client.h"

namespace tilestream {
namespace {

std::optional<SocketAddress> Resolved(const LanPeer& at) {
  auto a = SocketAddress::Resolve(at.host, at.port);
  if (!a.ok()) return std::nullopt;
  return *a;
}

}  // namespace

// Bound to every address, for the leader's decisions and, leading, the
// nodes' reports; its port said to the coordinator. REQUIRES: mu_ held.
void SyncClient::OpenLan() {
  const bool v6 = options_.address.find(':') != std::string::npos;
  auto lan = BindUdp(v6 ? "::" : "0.0.0.0", 0);
  if (!lan.ok()) return;  // decided by the coordinator, as a wall without a LAN
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  if (getsockname(lan->get(), reinterpret_cast<sockaddr*>(&bound), &length) != 0) return;
  lan_ = std::move(lan).value();
  lan_port_ =
      ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port
                                        : reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
  channel_.Send(FormatStamp("lan", lan_port_));
}

bool SyncClient::TakeLine(std::string_view line, Way way, std::vector<SyncEvent>* events) {
  if (auto e = ParseSyncEvent(line)) {
    Take(*e, way, events);
    return true;
  }
  return TakeLeaderLine(line);
}

// "lead" makes this node the leader (its own reports go to its own LAN
// socket); "leader" names another, or none. Each line says the node's
// whole part: its copy by datagram may come before or after it.
bool SyncClient::TakeLeaderLine(std::string_view line) {
  if (auto lead = ParseLead(line)) {
    std::lock_guard lock(mu_);
    if (!leader_ || wall_key_ != lead->key || leader_->tiles() != lead->tiles) {
      leader_ = std::make_unique<TickLeader>(lead->tiles, lead->partial);
      peers_.clear();
      lan_carrier_.Clear();
      decided_carrier_.Clear();
    }
    wall_key_ = lead->key;
    const bool v6 = options_.address.find(':') != std::string::npos;
    leader_at_ = lan_.valid() ? Resolved({v6 ? "::1" : "127.0.0.1", lan_port_}) : std::nullopt;
    return true;
  }
  if (auto follow = ParseLeader(line)) {
    std::lock_guard lock(mu_);
    leader_.reset();
    wall_key_ = follow->key;
    leader_at_ = follow->at ? Resolved(*follow->at) : std::nullopt;
    return true;
  }
  if (line.starts_with("open ") || line.starts_with("gone ") || line.starts_with("peer ")) {
    if (!leader_) return true;  // a copy that came after this node stopped leading
    if (auto t = ParseOpen(line, leader_->tiles())) leader_->Open(*t);
    if (auto gone = ParseGone(line, leader_->tiles())) leader_->Gone(*gone);
    if (auto peer = ParsePeer(line)) {
      if (peers_.size() <= peer->node) peers_.resize(peer->node + 1);
      peers_[peer->node] = Resolved(peer->at);
    }
    return true;
  }
  return false;
}

// At most 64 a call, each with the wall's key: reports, taken when
// leading; the leader's decisions.
void SyncClient::ReadLan(std::vector<SyncEvent>* events) {
  std::array<char, kMaxSyncDatagram + 1> buffer;
  for (int n = 0; n < 64; ++n) {
    std::unique_lock lock(mu_);
    if (!lan_.valid()) return;
    const ssize_t got = recv(lan_.get(), buffer.data(), buffer.size(), MSG_DONTWAIT);
    if (got < 0) return;
    const auto d = ParseSyncDatagram(std::string_view(buffer.data(), static_cast<size_t>(got)));
    if (!d || wall_key_ == 0 || d->key != wall_key_) continue;
    lock.unlock();
    for (size_t i = 0; i < d->count; ++i) {
      const auto r = ParseSyncReport(d->lines[i]);
      if (r && r->kind == SyncReport::Kind::kComplete && leader_)
        leader_->Complete(r->tile, r->timestamp, RealtimeNs());
      else if (auto e = ParseSyncEvent(d->lines[i]))
        Take(*e, Way::kLan, events);
    }
  }
}

// The decisions due: taken here, to every node's LAN socket (each datagram
// carrying the last ones), and to the coordinator by line and datagram.
void SyncClient::Lead(std::vector<SyncEvent>* events) {
  if (!leader_) return;
  decided_.clear();
  leader_->Decide(RealtimeNs(), &decided_);
  if (decided_.empty()) return;
  led_.fetch_add(decided_.size(), std::memory_order_relaxed);
  led_late_.store(leader_->skipped_late(), std::memory_order_relaxed);
  std::lock_guard lock(mu_);
  for (const LeaderDecision& d : decided_) {
    Take(d.event, Way::kLan, events);
    lan_carrier_.Add(d.event);
    std::string line = FormatDecided(d);
    channel_.Send(line);
    decided_carrier_.Add(std::move(line));
  }
  if (lan_.valid()) {
    const std::string datagram = lan_carrier_.Datagram(wall_key_);
    for (const std::optional<SocketAddress>& peer : peers_)
      if (peer) SendCopies(lan_.get(), datagram, kSyncCopies, &peer->storage, peer->length);
  }
  if (udp_.valid()) SendCopies(udp_.get(), decided_carrier_.Datagram(udp_key_), kSyncCopies);
}

}  // namespace tilestream
