// The swap sync's side of the control port (streamer/control_server.h): a
// display node's join, its reports and round trips, by line or datagram,
// and the decisions sent to every synced node.
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/random.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "common/base/clock.h"
#include "common/base/json_text.h"
#include "common/control/control_protocol.h"
#include "common/net/datagram_port.h"
#include "streamer/control_server.h"

namespace tilestream {

// Without it the sync's lines go over TCP alone, as a wall whose UDP is
// blocked has them.
void ControlServer::OpenSyncDatagrams() {
  auto udp = BindUdp(config_.control.listen_address, port_number_);
  if (!udp.ok()) {
    spdlog::warn(
        "swap sync: no datagrams ({}): its lines go over TCP alone, a lost segment "
        "holding the decisions after it back",
        udp.status().message());
    return;
  }
  sync_udp_ = std::move(udp).value();
  Watch(sync_udp_.get(), [this] { ReceiveSyncDatagrams(); });
}

size_t ControlServer::synced_nodes() const {
  return static_cast<size_t>(std::count_if(clients_.begin(), clients_.end(),
                                           [](const auto& c) { return c.second.node >= 0; }));
}

void ControlServer::PingSyncNodes(bool unsettled_only) {
  const int64_t now = MonotonicNs();
  for (auto& [id, c] : clients_)
    if (c.node >= 0 && !(unsettled_only && c.trip.settled())) SendPing(id, c, c.trip.Ping(now));
}

// As a datagram once the node's come (common/control/node_round_trip.h).
// One copy: a lost ping is one sample less.
void ControlServer::SendPing(uint64_t id, const Client& c, NodeRoundTrip::Via via) {
  if (via == NodeRoundTrip::Via::kDatagram && c.udp_peer_length > 0)
    SendCopies(sync_udp_.get(), FormatSyncDatagram(c.udp_key, FormatPing(MonotonicNs())), 1,
               &c.udp_peer, c.udp_peer_length);
  else if (via == NodeRoundTrip::Via::kLine)
    Send(id, FormatPing(MonotonicNs()));
}

void ControlServer::SampleRtt(uint64_t id, Client& c, int64_t pong_ns, NodeRoundTrip::Via via) {
  const NodeRoundTrip::Answer a = c.trip.Pong(via, pong_ns, MonotonicNs());
  if (a.sampled) Send(id, FormatRtt(c.trip.estimate()));  // the node's repairs wait as long
  SendPing(id, c, a.ping);
}

void ControlServer::SetLatency(int64_t ns) {
  latency_ns_ = ns;
  for (const auto& [id, c] : clients_)
    if (c.node >= 0) Send(id, FormatStamp("latency", ns));
}

void ControlServer::SetNackCopies(int copies) {
  nack_copies_ = copies;
  for (const auto& [id, c] : clients_)
    if (c.node >= 0) Send(id, FormatStamp("nack_copies", copies));
}

RttEstimate ControlServer::NodeRtt(uint32_t node) const {
  for (const auto& [id, c] : clients_)
    if (c.node == static_cast<int>(node)) return c.trip.estimate();
  return {};
}

RttEstimate ControlServer::LargestRtt() const {
  RttEstimate most;
  for (const auto& [id, c] : clients_) {
    if (c.node < 0 || !c.trip.settled()) continue;
    most.rtt_ns = std::max(most.rtt_ns, c.trip.estimate().rtt_ns);
    most.rttvar_ns = std::max(most.rttvar_ns, c.trip.estimate().rttvar_ns);
    ++most.samples;
  }
  return most;
}

bool ControlServer::HandleSyncLine(uint64_t id, Client& c, const std::string& line) {
  if (auto pong = ParseStamp("pong", line)) {
    SampleRtt(id, c, *pong, NodeRoundTrip::Via::kLine);
    return true;
  }
  if (auto r = ParseSyncReport(line)) {
    HandleSyncReport(c, *r);
    return true;
  }
  return HandleLeaderLine(id, c, line);
}

// A node's own tiles only.
void ControlServer::HandleSyncReport(const Client& c, const SyncReport& r) {
  if (r.tile >= config_.tile_count() ||
      config_.routes[r.tile].node != static_cast<uint32_t>(c.node))
    return;
  switch (r.kind) {
    case SyncReport::Kind::kComplete:
      sync_->Complete(r.tile, r.timestamp, MonotonicNs());
      break;
    case SyncReport::Kind::kShown:
      sync_->Shown(r.tile, r.timestamp, r.shown_ns);
      break;
    case SyncReport::Kind::kStats:
      receiver_stats_[r.tile] = {true, r.stats};
      break;
  }
}

// Datagrams from anyone: taken only with a synced node's key, and then
// only its sync reports and pongs (never a command); where the last one
// came from is where its decisions go. At most kDatagramsPerRound a round,
// like lines.
void ControlServer::ReceiveSyncDatagrams() {
  constexpr int kDatagramsPerRound = 256;
  std::array<char, kMaxSyncDatagram + 1> buffer;
  for (int n = 0; n < kDatagramsPerRound; ++n) {
    sockaddr_storage from{};
    socklen_t length = sizeof from;
    const ssize_t got = recvfrom(sync_udp_.get(), buffer.data(), buffer.size(), MSG_DONTWAIT,
                                 reinterpret_cast<sockaddr*>(&from), &length);
    if (got < 0) return;
    const auto d = ParseSyncDatagram(std::string_view(buffer.data(), static_cast<size_t>(got)));
    if (!d) continue;
    const auto it = std::find_if(clients_.begin(), clients_.end(), [&](const auto& entry) {
      const Client& c = entry.second;
      return c.node >= 0 && c.udp_key != 0 && c.udp_key == d->key;
    });
    if (it == clients_.end()) continue;
    Client& c = it->second;
    const bool first = c.udp_peer_length == 0;
    c.udp_peer = from;
    c.udp_peer_length = length;
    SendPing(it->first, c, c.trip.DatagramsKnown());  // its first: pinged that way
    if (first && leader_node_ >= 0)
      SendPeer(c);
    else if (first)
      ChooseLeader();
    for (size_t i = 0; i < d->count; ++i) {
      if (auto pong = ParseStamp("pong", d->lines[i]))
        SampleRtt(it->first, c, *pong, NodeRoundTrip::Via::kDatagram);
      else if (auto r = ParseSyncReport(d->lines[i]); r && r->kind == SyncReport::Kind::kComplete)
        HandleSyncReport(c, *r);
      else if (auto decided = ParseDecided(d->lines[i], config_.tile_count());
               decided && it->first == leader_id_)
        sync_->Adopt(*decided);
    }
  }
}

void ControlServer::Subscribe(uint64_t id, Client& c, std::string_view words) {
  if (!config_.sync.enabled)
    return Send(id,
                ErrorReply(fmt::format("swap sync is off (sync.enabled in {})", config_.source)));
  const size_t space = words.find(' ');
  const std::string node_name(words.substr(0, space));
  const std::string_view said = space == std::string_view::npos ? "" : words.substr(space + 1);
  int node = -1;
  for (size_t n = 0; n < config_.nodes.size(); ++n)
    if (config_.nodes[n].name == node_name) node = static_cast<int>(n);
  if (node < 0)
    return Send(id, ErrorReply(fmt::format("no display node '{}' in {}", Printable(node_name),
                                           config_.source)));
  if (const std::string refusal = GeometryRefusal(static_cast<uint32_t>(node), said);
      !refusal.empty())
    return Send(id, ErrorReply(refusal));
  // A restarted receiver may reconnect before its old connection is seen
  // closing: the newest connection of a node wins.
  for (auto& [other_id, other] : clients_) {
    if (other_id != id && other.node == node) {
      Drop(other);
      port_->core().Close(other_id);
    }
  }
  c.node = node;
  const NodeRoundTrip::Via first_ping = c.trip.Joined();
  c.udp_peer_length = 0;
  c.carrier.Clear();
  c.udp_key = 0;
  if (sync_udp_.valid() && getrandom(&c.udp_key, sizeof c.udp_key, 0) != sizeof c.udp_key)
    c.udp_key = 0;  // no key, no datagrams: TCP alone
  port_->Keep(id, true);
  nlohmann::json tiles = nlohmann::json::array();
  for (uint32_t t = 0; t < config_.tile_count(); ++t) {
    if (config_.routes[t].node != static_cast<uint32_t>(node)) continue;
    sync_->SetMember(t, true);
    tiles.push_back(TileId::FromIndex(t, config_.wall.layout).Name());
  }
  nlohmann::json reply = {{"ok", true}, {"sync", node_name}, {"tiles", tiles}};
  if (c.udp_key != 0) reply["udp_key"] = FormatSyncKey(c.udp_key);
  Send(id, JsonText(reply));
  SendPing(id, c, first_ping);  // a round trip before the first tick
  if (latency_ns_ > 0) Send(id, FormatStamp("latency", latency_ns_));
  if (nack_copies_ > 1) Send(id, FormatStamp("nack_copies", nack_copies_));
  if (leader_node_ >= 0) SayLeader(id, c);
}

// A node that says its tile size (receivers since issue 44) must have the
// wall's: one that assumed another (a movie cut for 320x200 tiles played to
// receivers started for 640x400) would show nothing, and the cause would be
// in its own log only.
std::string ControlServer::GeometryRefusal(uint32_t node, std::string_view said) {
  std::string refusal;
  const TileGeometry& wall = config_.wall.tile;
  if (!said.empty()) {
    const auto size = ParseSize(said, "the tile size", 1, kMaxTileDimension);
    if (!size.ok()) {  // said by the node: printable, bounded
      refusal = fmt::format("display node '{}': its tile size '{}' is not WxH within {}x{}",
                            config_.nodes[node].name, Printable(said), kMaxTileDimension,
                            kMaxTileDimension);
    } else if (size->width != wall.width || size->height != wall.height) {
      refusal = fmt::format(
          "display node '{}' has tiles of {}x{}, but the wall streams {}x{}: start its receiver "
          "with the wall's tile size",
          config_.nodes[node].name, size->width, size->height, wall.width, wall.height);
    }
  }
  // A node already synced keeps its place, and what a stranger says in its
  // name is refused without showing the node as refused.
  const bool synced = std::any_of(clients_.begin(), clients_.end(), [&](const auto& c) {
    return c.second.node == static_cast<int>(node);
  });
  if (synced) return refusal;
  if (!refusal.empty() && refusal != refusals_[node])
    spdlog::error("swap sync: {}; the wall plays on without it", refusal);
  refusals_[node] = refusal;
  return refusal;
}

// Its tiles leave the sync; a leader is given up, and one that stays is
// told not to wait for them.
void ControlServer::Drop(Client& c) {
  if (c.node < 0) return;
  std::vector<bool> gone(config_.tile_count(), false);
  for (uint32_t t = 0; t < config_.tile_count(); ++t) {
    if (config_.routes[t].node != static_cast<uint32_t>(c.node)) continue;
    sync_->SetMember(t, false);
    gone[t] = true;
  }
  const auto leader = clients_.find(leader_id_);
  const bool led = leader_node_ >= 0 && leader != clients_.end() && &leader->second == &c;
  c.node = -1;
  if (led)
    GiveUpLeader("its connection closed");
  else if (leader_node_ >= 0 && config_.tile_count() <= kMaxLedTiles)
    ToLeader(FormatGone(gone));
}

void ControlServer::SendSync(const std::vector<SyncEvent>& events) {
  if (events.empty()) return;
  for (auto& [id, c] : clients_) {
    if (c.node < 0) continue;
    for (const SyncEvent& e : events) {
      Send(id, FormatSyncEvent(e));
      c.carrier.Add(e);
    }
    if (c.udp_peer_length > 0)
      SendCopies(sync_udp_.get(), c.carrier.Datagram(c.udp_key), kSyncCopies, &c.udp_peer,
                 c.udp_peer_length);
  }
}

}  // namespace tilestream
