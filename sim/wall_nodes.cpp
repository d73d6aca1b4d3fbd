// The display nodes' side of the simulated wall: each tile's receiving
// and repairs, the sync client and the presenter (sim/wall.h).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "common/receive/ask_for_lost.h"
#include "sim/tile_view.h"
#include "sim/wall.h"

namespace tilestream::sim {

void Wall::OnNode(uint32_t node, std::function<void()> what) {
  if (Stopped(node))
    nodes_[node].while_stopped.push_back(std::move(what));
  else
    what();
}

// The tile's network thread (receiver/tile_receiver.cpp): a batch taken
// in, stamped when read; then what is due asked for.
void Wall::Receive(uint32_t tile, const std::shared_ptr<std::vector<Datagram>>& batch) {
  Tile& t = tiles_[tile];
  if (Stopped(t.node)) {  // waits in the socket, as far as its buffer holds
    size_t bytes = 0;
    for (const Datagram& d : *batch) bytes += d.size;
    if (t.stalled_bytes + bytes > c_.stream.receive_buffer) {
      r_.dropped_at_nodes += batch->size();
      return;
    }
    t.stalled_bytes += bytes;
    nodes_[t.node].while_stopped.push_back([this, tile, batch] {
      tiles_[tile].stalled_bytes = 0;
      Receive(tile, batch);
    });
    return;
  }
  if (LossTracker* loss = t.assembler->loss()) loss->SetNow(q_.now());
  for (const Datagram& d : *batch) Admit(t, d);
  if (t.assembler->loss()) AskForLost(tile);
}

void Wall::Admit(Tile& t, const Datagram& d) {
  FrameAssembler& a = *t.assembler;
  if (!d.whole.empty()) {
    if (a.is_retransmission(d.whole))
      a.AddRetransmission(d.whole);
    else
      a.Add(d.whole);
  } else {
    const FrameAssembler::Placement p = a.PlacementTarget();
    Rfc4175View v;
    // Headers that do not parse are handed over as they are: malformed.
    if (p.frame && PlacedView(d.bytes(), d.size, c_.wall.tile, p.frame, &v))
      a.AddParsed(v, p.frame, nullptr);
    else
      a.Add(d.bytes());
  }
  if (const ReadyFrame* f = a.just_finished(); f && f->complete) {
    const std::string line = FormatComplete(t.index, f->timestamp);
    Node& n = nodes_[t.node];
    n.to_server->Send(line);
    SendDatagram(t.node, false, FormatSyncDatagram(n.key, line), kSyncCopies);
    if (n.follows >= 0)
      SendLan(t.node, static_cast<uint32_t>(n.follows), FormatSyncDatagram(kWallKey, line));
  }
}

void Wall::AskForLost(uint32_t tile) {
  Tile& t = tiles_[tile];
  LossTracker* loss = t.assembler->loss();
  Path& feedback = *nodes_[t.node].feedback;
  tilestream::AskForLost(
      *loss, TileReceiverSsrc(tile), t.assembler->ssrc(), [&](std::span<const std::byte> nack) {
        if (feedback.LoseDatagram(q_.now())) return;
        auto copy = std::make_shared<std::vector<std::byte>>(nack.begin(), nack.end());
        q_.At(feedback.ArrivalNs(q_.now()), [this, tile, copy] {
          TileSender& s = *tiles_[tile].sender;
          if (SimSockets::Endpoint* e = sockets_.Find(s.socket().fd())) {
            e->feedback.push_back(*copy);
            s.AnswerFeedback();
          }
        });
      });
  const int64_t next = loss->next_due_ns();
  if (next != LossTracker::kNever && next < t.nack_timer_ns) {
    t.nack_timer_ns = next;
    q_.At(next, [this, tile] {
      Tile& t = tiles_[tile];
      if (q_.now() < t.nack_timer_ns) return;  // superseded
      t.nack_timer_ns = LossTracker::kNever;
      if (Stopped(t.node)) return;  // asked again when it runs
      t.assembler->loss()->SetNow(q_.now());
      AskForLost(tile);
    });
  }
}

// A display node's sync client and presenter (receiver/presenter.cpp): a
// decision shown at its moment of the node's clock, or at once.
void Wall::AtNode(uint32_t node, const std::string& line) {
  Node& n = nodes_[node];
  if (auto ping = ParseStamp("ping", line)) {
    n.to_server->Send(FormatPong(*ping));
    // The join's reply came with it: the node's first datagram, so that
    // the coordinator knows where they come from (receiver/sync_client.cpp).
    if (!n.hello_sent) SendDatagram(node, false, FormatSyncDatagram(n.key, ""), kSyncCopies);
    n.hello_sent = true;
    return;
  }
  if (auto rtt = ParseRtt(line)) {  // the tiles' repairs wait as long (receiver/node_setup.cpp)
    for (uint32_t t : n.tiles)
      if (LossTracker* loss = tiles_[t].assembler->loss())
        loss->SetRttHint(rtt->rtt_ns, rtt->rttvar_ns);
    return;
  }
  if (line.starts_with("open ") || line.starts_with("gone ") || line.starts_with("lead"))
    return AtLeaderLine(node, line);
  const std::optional<SyncEvent> e = ParseSyncEvent(line);
  if (!e || !n.filter.Accept(*e)) return;  // a copy of one the other way brought
  const uint64_t late = n.schedule.late();
  const std::optional<SyncEvent> now = n.schedule.Take(*e, q_.now() + ClockOffsetNs(n));
  // A path down in the last seconds excuses a late decision: what it held
  // back arrives in a rush when it comes back.
  if (n.schedule.late() > late) ++(Excused(node) ? r_.late_decisions_path_down : r_.late_decisions);
  if (now && now->decision != SyncDecision::kSkip)
    Show(node, *now);  // a skip: counted, nothing taken
  ShowDue(node);
}

void Wall::ShowDue(uint32_t node) {
  Node& n = nodes_[node];
  while (n.schedule.next_at_ns() != PresentSchedule::kNever &&
         n.schedule.next_at_ns() <= q_.now() + ClockOffsetNs(n))
    Show(node, n.schedule.TakeNext());
  if (n.schedule.next_at_ns() == PresentSchedule::kNever) return;
  const int64_t at = n.schedule.next_at_ns() - ClockOffsetNs(n);
  if (at >= n.wake_ns && n.wake_ns > q_.now()) return;  // already waking for it
  n.wake_ns = at;
  q_.At(at, [this, node, at] {
    if (nodes_[node].wake_ns != at) return;  // superseded
    nodes_[node].wake_ns = INT64_MAX;
    OnNode(node, [=, this] { ShowDue(node); });
  });
}

bool Wall::Excused(uint32_t node) const {
  const Node& n = nodes_[node];
  bool excused = n.sync_out->DownBetween(q_.now() - 3 * kSecond, q_.now());
  for (const auto& [from, to] : n.stops)  // or it was stopped, its socket holding them
    excused = excused || (from < q_.now() && to > q_.now() - 3 * kSecond);
  return excused;
}

// The sync client's datagrams: decisions as the TCP lines are, pings
// answered the way they came.
void Wall::AtNodeDatagram(uint32_t node, const std::string& datagram) {
  Node& n = nodes_[node];
  const std::optional<SyncDatagram> d = ParseSyncDatagram(datagram);
  if (!d || d->key != n.key) return;
  for (size_t i = 0; i < d->count; ++i) {
    if (auto ping = ParseStamp("ping", d->lines[i]))
      SendDatagram(node, false, FormatSyncDatagram(n.key, FormatPong(*ping)), 1);
    else
      AtNode(node, std::string(d->lines[i]));
  }
}

// The node's tiles show the tick, each one's frame whole (and, with
// pixels, exact); the moment is reported as the node's clock reads it.
// The wall's skew on the virtual clock leaves out a show that a fault made
// late: its path down, or the node stopped at its moment.
void Wall::Show(uint32_t node, const SyncEvent& e) {
  Node& n = nodes_[node];
  const int64_t shown = q_.now() + ClockOffsetNs(n);
  const bool excused = Excused(node);
  for (uint32_t t : n.tiles) {
    std::optional<ReadyFrame> f = tiles_[t].assembler->TakeFrame(e.timestamp, false);
    if (!f) {  // the previous picture stays: torn, unless the tile was left out
      const auto it = takers_.find(e.timestamp);
      if (it != takers_.end() && it->second[t])
        ++(faulted_[node] ? r_.ticks_torn_excused : r_.ticks_torn);
      continue;
    }
    ++r_.shown_frames;
    if (!f->complete) ++r_.shown_not_whole;
    if (s_.pixels) {
      const auto it = frame_of_timestamp_.find(e.timestamp);
      const std::span<const std::byte> px(f->pixels, c_.wall.tile.frame_bytes());
      if (it == frame_of_timestamp_.end() || Checksum(px) != checksums_[PixelIndex(t, it->second)])
        ++r_.shown_not_exact;
    }
    n.to_server->Send(FormatShown(t, e.timestamp, shown));
    if (excused) {
      ++r_.shows_excused;
      continue;
    }
    Shows& when = shows_[e.timestamp];
    when.first = std::min(when.first, q_.now());
    when.last = std::max(when.last, q_.now());
    ++when.count;
  }
}

}  // namespace tilestream::sim
