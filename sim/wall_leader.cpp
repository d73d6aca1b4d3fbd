// The swap sync decided at the wall's side (common/control/tick_leader.h;
// sim/wall.h): the coordinator's choice of a leader and the ticks it sends
// it, the leader's decisions, and the nodes' reports to it over the LAN.
// As the control server (streamer/control_leader.cpp) and the nodes' sync
// clients (receiver/sync_client.cpp) do it, with one simplification: the
// leader knows every node's LAN address from the start (the control
// server tells it each node's as the node's datagrams come).
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>

#include "common/base/words.h"
#include "sim/wall.h"

namespace tilestream::sim {

// The first node whose datagrams came (as it joins; after a leader was
// given up, the first in the config's order whose have) and that was never
// given up; none where the coordinator decides (no playout
// latency, `decide = "server"`, a wall too large). Each node is told who
// leads by its sync connection ("leader N").
void Wall::ChooseLeader() {
  if (leader_ >= 0 || no_leader_ || !latency_.timed() || !c_.sync.decide_at_wall ||
      tiles_.size() > kMaxLedTiles)
    return;
  for (uint32_t n = 0; n < nodes_.size() && leader_ < 0; ++n)
    if (nodes_[n].datagrams_seen && !nodes_[n].demoted) leader_ = static_cast<int>(n);
  if (leader_ < 0) return;
  open_carrier_.Clear();
  SayLeader();
  ++r_.leaders;
  latency_.SetDecidedAtWall(true);
  UpdateLatency();
}

// Its ticks waiting are skipped (no other decides them in its place), and
// the next node leads the ticks opened from now on.
void Wall::GiveUpLeader() {
  if (leader_ < 0) return;
  r_.abandoned += master_.AbandonLed();
  ++r_.leaders_given_up;
  nodes_[leader_].demoted = true;
  leader_ = -1;
  latency_.SetDecidedAtWall(false);
  UpdateLatency();
  ChooseLeader();
  if (leader_ < 0) SayLeader();
}

// Who leads now, to every node by line and by datagram: a lost segment
// must not keep the reports from the leader while TCP repairs it.
void Wall::SayLeader() {
  LeaderLine follow;
  if (leader_ >= 0) follow = {LanPeer{LanHost(static_cast<uint32_t>(leader_)), kLanPort}, kWallKey};
  for (uint32_t n = 0; n < nodes_.size(); ++n) {
    const std::string line =
        static_cast<int>(n) == leader_
            ? FormatLead({kWallKey, static_cast<uint32_t>(tiles_.size()), c_.sync.partial})
            : FormatLeader(follow);
    nodes_[n].to_node->Send(line);
    SendDatagram(n, true, FormatSyncDatagram(nodes_[n].key, line), kSyncCopies);
  }
}

// A node's LAN address, as the leader's line names it.
std::string Wall::LanHost(uint32_t node) {
  return fmt::format("10.0.{}.{}", node / 256, node % 256);
}

void Wall::OpenLed(uint64_t tick, uint32_t timestamp, const PlayoutLatency::TickMoments& m,
                   const std::vector<bool>& takers) {
  ToLeader(FormatOpen({tick, timestamp, m.deadline_ns, m.at_ns, takers}));
}

void Wall::ToLeader(const std::string& line) {
  Node& n = nodes_[leader_];
  n.to_node->Send(line);
  open_carrier_.Add(line);
  SendDatagram(leader_, true, open_carrier_.Datagram(n.key), kSyncCopies);
}

// A node's sync client: who leads, and, leading, the ticks opened.
void Wall::AtLeaderLine(uint32_t node, const std::string& line) {
  Node& n = nodes_[node];
  if (auto t = ParseOpen(line, static_cast<uint32_t>(tiles_.size()))) {
    if (!n.leading) return;
    n.leader->Open(*t);
    Lead(node);
    return;
  }
  if (auto gone = ParseGone(line, static_cast<uint32_t>(tiles_.size()))) {
    if (!n.leading) return;
    n.leader->Gone(*gone);
    Lead(node);
    return;
  }
  if (ParseLead(line)) {
    if (!n.leading) n.leader->Reset();  // a new leadership (or a copy of the line)
    n.leading = true;
    n.follows = static_cast<int>(node);
    return;
  }
  const std::optional<LeaderLine> l = ParseLeader(line);
  if (!l) return;
  n.leading = false;
  n.follows = -1;
  for (uint32_t other = 0; other < nodes_.size() && l->at; ++other)
    if (LanHost(other) == l->at->host) n.follows = static_cast<int>(other);
}

// The leader's decisions due by its clock: taken at once at its own node,
// to every other node over the LAN and to the coordinator by line and
// datagram, each datagram carrying the ones before; then a wake-up at the
// next deadline.
void Wall::Lead(uint32_t node) {
  Node& n = nodes_[node];
  std::vector<LeaderDecision> decided;
  n.leader->Decide(q_.now() + ClockOffsetNs(n), &decided);
  for (const LeaderDecision& d : decided) {
    n.lan_carrier.Add(d.event);
    const std::string line = FormatDecided(d);
    n.decided_carrier.Add(line);
    n.to_server->Send(line);
    AtNode(node, FormatSyncEvent(d.event));
  }
  if (!decided.empty()) {
    for (uint32_t other = 0; other < nodes_.size(); ++other)
      if (other != node) SendLan(node, other, n.lan_carrier.Datagram(kWallKey));
    SendDatagram(node, false, n.decided_carrier.Datagram(n.key), kSyncCopies);
  }
  const int64_t next = n.leader->next_deadline_ns();
  if (next == INT64_MAX) return;
  const int64_t at = std::max(q_.now(), next - ClockOffsetNs(n));
  if (at >= n.lead_wake_ns && n.lead_wake_ns > q_.now()) return;  // already waking for it
  n.lead_wake_ns = at;
  q_.At(at, [this, node, at] {
    if (nodes_[node].lead_wake_ns != at) return;  // superseded
    nodes_[node].lead_wake_ns = INT64_MAX;
    OnNode(node, [=, this] {
      if (nodes_[node].leading) Lead(node);
    });
  });
}

// kSyncCopies copies through the switch: lost where either node's link is
// down, or on the way into the receiving node.
void Wall::SendLan(uint32_t from, uint32_t to, const std::string& datagram) {
  Path& into = *nodes_[to].lan;
  for (int i = 0; i < kSyncCopies; ++i) {
    if (nodes_[from].lan->down(q_.now()) || into.LoseDatagram(q_.now())) continue;
    q_.At(into.ArrivalNs(q_.now()),
          [this, to, datagram] { OnNode(to, [=, this] { AtNodeLan(to, datagram); }); });
  }
}

// The LAN's datagrams with the wall's key: reports, at the leader, and the
// leader's decisions, at every node (taken as the coordinator's are).
void Wall::AtNodeLan(uint32_t node, const std::string& datagram) {
  Node& n = nodes_[node];
  const std::optional<SyncDatagram> d = ParseSyncDatagram(datagram);
  if (!d || d->key != kWallKey) return;
  bool reported = false;
  for (size_t i = 0; i < d->count; ++i) {
    const std::optional<SyncReport> r = ParseSyncReport(d->lines[i]);
    if (r && r->kind == SyncReport::Kind::kComplete) {
      if (!n.leading) continue;
      n.leader->Complete(r->tile, r->timestamp, q_.now() + ClockOffsetNs(n));
      reported = true;
    } else if (ParseSyncEvent(d->lines[i])) {
      AtNode(node, std::string(d->lines[i]));
    }
  }
  if (reported) Lead(node);
}

}  // namespace tilestream::sim
