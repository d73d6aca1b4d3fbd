// The streamer's side of the simulated wall: the coordinator's tick clock,
// the tile ranks' frames and bursts, the NICs, the swap sync's master, the
// shedder and NIC failover (sim/wall.h).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "common/wall/nic_failover.h"
#include "sim/wall.h"

namespace tilestream::sim {

// The coordinator's tick (streamer/coordinator.cpp): shed or sent on every
// tile, opened with the sync, its frames paced until the next tick sent.
void Wall::Tick(uint64_t tick) {
  next_tick_ns_ = q_.now() + interval_ns_;
  if (tick + 1 < static_cast<uint64_t>(std::llround(s_.seconds * c_.wall.fps)))
    q_.At(next_tick_ns_, [this, tick] { Tick(tick + 1); });
  ++r_.ticks;
  // The movie and its frame (streamer/wall_movies.cpp's BeforeTick, the
  // coordinator's Playback), shed or not: a movie every tile has
  // pre-rolled is switched to at this tick, on every tile.
  if (const auto first = movies_.TakeReady(tick)) playback_.Load(kFrames, *first);
  const auto slot =
      static_cast<uint32_t>(movies_.playing_generation() * kFrames + playback_.Advance());
  if (!shedder_.Keep()) return;
  const uint32_t next_in = shedder_.ticks_to_next();
  const uint32_t timestamp = RtpTimestampForTick(tick, c_.wall.fps, timestamp_base_);
  frame_of_timestamp_[timestamp] = slot;
  for (Tile& t : tiles_) StartFrame(t, timestamp, next_in * interval_ns_);
  if (tick + 1 == static_cast<uint64_t>(std::llround(s_.seconds * c_.wall.fps)))
    q_.At(q_.now() + next_in * interval_ns_, [this] { EndStreams(); });
  // As the coordinator opens it (streamer/wall_sync.cpp), on the server's
  // clock: its offset 0.
  const PlayoutLatency::TickMoments m = latency_.MomentsFor(q_.now() + next_in * interval_ns_);
  std::vector<bool>& takers = takers_[timestamp];  // who takes part as it opens
  takers.resize(tiles_.size());
  for (uint32_t t = 0; t < tiles_.size(); ++t)
    takers[t] = master_.member(t) && !master_.left_out(t);
  const bool led = leader_ >= 0 && std::find(takers.begin(), takers.end(), true) != takers.end();
  master_.OpenTick(tick, timestamp, m.deadline_ns, m.at_ns, led);
  if (led) OpenLed(tick, timestamp, m, takers);
  ScheduleDecide();
}

// A tile rank's share of a tick (streamer/tile_rank.cpp's Play and Pump):
// the frame is planned from the tick; a frame still going out is hurried
// out first (blocked by its NIC as a send is), and a tick that comes while
// another waits behind it replaces it, skipped (TickWait::SeenLate).
void Wall::StartFrame(Tile& t, uint32_t timestamp, int64_t window_ns) {
  if (t.sender->sending()) {
    if (t.queued) {
      ++t.skipped_ticks;
      ++t.counters.skipped_ticks;
    }
    t.queued = Queued{timestamp, q_.now(), window_ns};
    t.hurry = true;
    return;
  }
  BeginFrame(t, {timestamp, q_.now(), window_ns});
}

// A rank running late sees the tick late, and its pacer squeezes the frame
// into what is left of its window.
void Wall::BeginFrame(Tile& t, const Queued& f) {
  TileSender& s = *t.sender;
  s.BeginFrame(FrameOf(t.index, f.timestamp), f.timestamp, f.due_ns, f.window_ns);
  if (!s.sending()) return;
  t.hurry = q_.now() >= next_tick_ns_;
  ++t.sent_ticks;
  ++t.counters.frames_sent;
  const int64_t seen = q_.now() + (q_.now() < late_until_[t.index] ? late_by_[t.index] : 0);
  const uint32_t i = t.index;
  q_.At(std::max(seen, s.NextBurstNs()), [this, i] { Burst(i); });
}

// One burst; the next when the pacer has it due, or, hurried, at once. A
// send blocks while its NIC's queue is full: the next burst waits for it
// to drain. A frame out, the one queued behind it starts.
void Wall::Burst(uint32_t tile) {
  Tile& t = tiles_[tile];
  TileSender& s = *t.sender;
  if (!s.sending()) return;
  s.SendBurst(t.hurry);
  const int64_t blocked = nic_free_ns_[t.nic] - NicQueueNs(t.nic);
  if (s.sending()) {
    q_.At(std::max(t.hurry ? q_.now() : s.NextBurstNs(), blocked), [this, tile] { Burst(tile); });
  } else if (t.queued) {
    const Queued next = *t.queued;
    t.queued.reset();
    q_.At(std::max(q_.now(), blocked), [this, tile, next] {
      if (!tiles_[tile].sender->sending()) BeginFrame(tiles_[tile], next);
    });
  }
}

// A call's datagrams: through the tile's NIC at its speed (unknown: at
// once), then its node's path, each lost or not, all arriving with the
// last of them but those the path holds back (each alone, later) and
// with the copies it makes.
void Wall::Sent(uint32_t tile, std::vector<Datagram>&& datagrams) {
  r_.datagrams += datagrams.size();
  const uint32_t nic = tiles_[tile].nic;
  int64_t departs = q_.now();
  if (capacity_[nic] > 0) {
    uint64_t bytes = 0;
    for (const Datagram& d : datagrams) bytes += d.size + 42;  // UDP, IP, Ethernet
    nic_free_ns_[nic] = std::max(nic_free_ns_[nic], q_.now()) +
                        static_cast<int64_t>(static_cast<double>(bytes) * 8e9 / capacity_[nic]);
    departs = nic_free_ns_[nic];
  }
  Path& path = *nodes_[tiles_[tile].node].media;
  auto batch = std::make_shared<std::vector<Datagram>>();
  batch->reserve(datagrams.size());
  std::vector<std::pair<int64_t, size_t>> held;  // how much later, which of batch
  for (Datagram& d : datagrams) {
    if (path.LoseDatagram(departs)) continue;
    const bool twice = path.Duplicate();
    if (const int64_t later = path.ReorderNs(); later > 0) held.emplace_back(later, batch->size());
    batch->push_back(std::move(d));
    if (twice) batch->push_back(batch->back());
  }
  if (batch->empty()) return;
  const int64_t at = path.ArrivalNs(departs);
  for (auto it = held.rbegin(); it != held.rend(); ++it) {
    auto alone = std::make_shared<std::vector<Datagram>>();
    alone->push_back(std::move((*batch)[it->second]));
    batch->erase(batch->begin() + static_cast<ptrdiff_t>(it->second));
    q_.At(at + it->first, [this, tile, alone] { Receive(tile, alone); });
  }
  if (!batch->empty()) q_.At(at, [this, tile, batch] { Receive(tile, batch); });
}

// The show's end: each sender's BYE once its last frame is out, so that a
// receiver asks for a lost tail of that frame (TileSender::EndStream).
void Wall::EndStreams() {
  bool waiting = false;
  for (Tile& t : tiles_) {
    if (t.sender->sending()) {
      waiting = true;
    } else if (!t.ended) {
      t.sender->EndStream();
      t.ended = true;
    }
  }
  if (waiting) q_.At(q_.now() + 1'000'000, [this] { EndStreams(); });
}

void Wall::ScheduleDecide() {
  const int64_t next = master_.next_deadline_ns();
  if (next == INT64_MAX || next >= decide_at_) return;
  decide_at_ = next;
  q_.At(next, [this, next] {
    if (decide_at_ != next) return;
    decide_at_ = INT64_MAX;
    Decide();
  });
}

// The decisions due (or the leader's, taken), to every node over its sync
// connection; a leader whose decisions stopped coming given up.
void Wall::Decide() {
  if (master_.LedOverdue(q_.now())) GiveUpLeader();
  if (master_.unheard_in_a_row() >= 3 && leader_ >= 0) {  // WallSync::kUnheard
    no_leader_ = true;
    GiveUpLeader();
  }
  events_.clear();
  master_.Decide(q_.now(), &events_);
  for (const SyncEvent& e : events_) {
    if (e.decision != SyncDecision::kSkip) {  // who must show it: took part at open and now
      std::vector<bool>& takers = takers_[e.timestamp];
      for (uint32_t t = 0; t < tiles_.size(); ++t)
        takers[t] = takers[t] && master_.member(t) && !master_.left_out(t);
    }
    const std::string line = FormatSyncEvent(e);
    for (Node& node : nodes_) {
      node.to_node->Send(line);
      node.carrier.Add(e);
    }
  }
  if (!events_.empty())
    for (uint32_t n = 0; n < nodes_.size(); ++n)
      SendDatagram(n, true, nodes_[n].carrier.Datagram(nodes_[n].key), kSyncCopies);
  ScheduleDecide();
}

void Wall::SendDatagram(uint32_t node, bool to_node, const std::string& datagram, int copies) {
  Path& path = to_node ? *nodes_[node].datagrams_out : *nodes_[node].datagrams_back;
  for (int i = 0; i < copies; ++i) {
    if (path.LoseDatagram(q_.now())) continue;
    if (to_node)
      q_.At(path.ArrivalNs(q_.now()), [this, node, datagram] {
        OnNode(node, [=, this] { AtNodeDatagram(node, datagram); });
      });
    else
      q_.At(path.ArrivalNs(q_.now()), [this, node, datagram] { AtServerDatagram(node, datagram); });
  }
}

// The control server's: the node's completes and pongs, nothing else.
void Wall::AtServerDatagram(uint32_t node, const std::string& datagram) {
  const std::optional<SyncDatagram> d = ParseSyncDatagram(datagram);
  if (!d || d->key != nodes_[node].key) return;
  Ping(node, nodes_[node].trip.DatagramsKnown());  // its first: pinged that way
  if (!nodes_[node].datagrams_seen) {
    nodes_[node].datagrams_seen = true;
    ChooseLeader();  // the first node whose datagrams come, before tick 0
  }
  for (size_t i = 0; i < d->count; ++i) {
    const std::string_view line = d->lines[i];
    const auto r = ParseSyncReport(line);
    if (ParseStamp("pong", line) || (r && r->kind == SyncReport::Kind::kComplete) ||
        line.starts_with("decided "))
      AtServer(node, std::string(line), NodeRoundTrip::Via::kDatagram);
  }
}

// As the control server's SendPing and SampleRtt (streamer/control_sync.cpp).
void Wall::Ping(uint32_t node, NodeRoundTrip::Via via) {
  const std::string ping = FormatStamp("ping", q_.now());
  if (via == NodeRoundTrip::Via::kDatagram)
    SendDatagram(node, true, FormatSyncDatagram(nodes_[node].key, ping), 1);
  else if (via == NodeRoundTrip::Via::kLine)
    nodes_[node].to_node->Send(ping);
}

void Wall::AtServer(uint32_t node, const std::string& line, NodeRoundTrip::Via via) {
  if (auto pong = ParseStamp("pong", line)) {
    Node& n = nodes_[node];
    const NodeRoundTrip::Answer a = n.trip.Pong(via, *pong, q_.now());
    if (a.sampled) n.to_node->Send(FormatRtt(n.trip.estimate()));
    Ping(node, a.ping);
    return;
  }
  if (auto d = ParseDecided(line, static_cast<uint32_t>(tiles_.size()))) {
    if (static_cast<int>(node) == leader_ && master_.Adopt(*d)) Decide();
    return;
  }
  const std::optional<SyncReport> r = ParseSyncReport(line);
  if (!r || r->tile >= tiles_.size()) return;
  if (r->kind == SyncReport::Kind::kComplete) {
    master_.Complete(r->tile, r->timestamp, q_.now());
    Decide();
  } else if (r->kind == SyncReport::Kind::kShown) {
    master_.Shown(r->tile, r->timestamp, r->shown_ns);
  }
}

// Once a second, as the coordinator's PrintSecond: the nodes pinged, the
// latency updated from the round trips, the shedder shown the senders'
// counts and the NICs' ceiling.
void Wall::Second() {
  if (q_.now() + kSecond < play_end_ns_) q_.At(q_.now() + kSecond, [this] { Second(); });
  for (uint32_t i = 0; i < nodes_.size(); ++i) Ping(i, nodes_[i].trip.Ping(q_.now()));
  uint64_t sent = 0, skipped = 0, datagrams = 0, sent_again = 0, lost = 0;
  std::vector<uint32_t> nic_of_tile;
  for (Tile& t : tiles_) {
    datagrams += t.sender->socket().stats().datagrams;
    sent_again += t.sender->stats().retransmitted;
    lost += t.assembler->stats().lost;  // as the receivers' stats lines say it
    sent += t.sent_ticks;
    skipped += t.skipped_ticks;
    t.sent_ticks = t.skipped_ticks = 0;
    nic_of_tile.push_back(t.nic);
  }
  latency_.SetSent(datagrams, sent_again, lost);
  UpdateLatency();
  shedder_.SetCeiling(FailoverCeiling(c_, nic_of_tile, capacity_));
  shedder_.Look(sent, skipped, static_cast<uint32_t>(tiles_.size()));
}

// From the largest round trip to a node and the longest a tile waits for
// a repair, as the coordinator's WallSync::UpdateLatency; the grace a
// leader's decisions have follows the sync's round trip.
void Wall::UpdateLatency() {
  int64_t sync = 0, sync_var = 0;
  LongestRepairWait repair;
  for (const Node& n : nodes_) {
    if (!n.trip.settled()) continue;  // as the control server's LargestRtt
    sync = std::max(sync, n.trip.estimate().rtt_ns);
    sync_var = std::max(sync_var, n.trip.estimate().rttvar_ns);
  }
  for (const Tile& t : tiles_) {
    if (const LossTracker* loss = t.assembler->loss())
      repair.Tile(loss->stats().rtt.rtt_ns, loss->stats().rtt.rttvar_ns);
  }
  master_.SetLedGrace(LeaderGraceNs(sync, sync_var));
  if (!latency_.timed() || sync == 0) return;
  const int64_t before = latency_.latency_ns();
  latency_.Update(sync, sync_var, repair.ns);
  // Each tile's repair window follows it, and its first requests' copies
  // ("latency NS", "nack_copies N").
  for (Tile& t : tiles_) {
    if (LossTracker* loss = t.assembler->loss()) {
      loss->SetFirstCopies(latency_.first_copies());
      if (latency_.latency_ns() != before) loss->SetWindow(interval_ns_ + latency_.latency_ns());
    }
  }
}

// streamer/nic_failover.cpp: a look every kLookNs, the tiles of a NIC
// that is down moved to the others (common/wall/nic_failover.h).
void Wall::LookAtNics() {
  if (q_.now() + kNicLookNs < play_end_ns_) q_.At(q_.now() + kNicLookNs, [this] { LookAtNics(); });
  const std::vector<uint32_t> plan = FailoverNics(c_, nic_up_);
  for (Tile& t : tiles_) t.nic = plan[t.index];
}

}  // namespace tilestream::sim
