#include "sim/wall_model.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include "common/base/rtt_estimate.h"
#include "common/control/playout_latency.h"
#include "common/control/skew_histogram.h"
#include "common/control/swap_sync.h"
#include "common/control/tick_shedder.h"
#include "common/receive/frame_assembler.h"
#include "common/send/tile_sender.h"
#include "common/wall/nic_failover.h"
#include "common/wall/wall_config.h"
#include "common/wire/rtcp_feedback.h"
#include "sim/event_queue.h"
#include "sim/path.h"
#include "sim/sim_sockets.h"
#include "sim/tile_view.h"

namespace tilestream::sim {

namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kNicLookNs = 100'000'000;  // streamer/nic_failover.h's kLookNs

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

// A tile's pixels: frame f of tile t, a pattern that differs per tile and
// frame, so that a frame shown on the wrong tile or at the wrong tick fails.
uint64_t Checksum(std::span<const std::byte> pixels) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (std::byte b : pixels) h = (h ^ static_cast<uint8_t>(b)) * 1099511628211ULL;
  return h;
}

class Wall {
 public:
  explicit Wall(const Scenario& s);
  WallReport Run();

 private:
  struct Queued {
    uint32_t timestamp = 0;
    int64_t due_ns = 0, window_ns = 0;
  };
  struct Tile {
    uint32_t index = 0, node = 0;
    std::unique_ptr<TileSender> sender;
    std::unique_ptr<Packetizer> plan;
    std::unique_ptr<FrameAssembler> assembler;
    int64_t nack_timer_ns = LossTracker::kNever;
    uint32_t nic = 0;
    bool hurry = false;                          // the frame being sent missed its tick
    std::optional<Queued> queued;                // the next tick's frame, waiting for it
    bool ended = false;                          // its BYE said
    uint64_t skipped_ticks = 0, sent_ticks = 0;  // since the shedder last looked
    TileCounters counters;
    size_t stalled_bytes = 0;  // waiting in its socket while its node is stopped
  };
  struct Node {
    std::unique_ptr<Path> media, feedback, sync_out, sync_back;
    std::unique_ptr<TcpStream> to_node, to_server;
    int64_t clock_offset_ns = 0;
    int64_t stopped_until_ns = 0;
    std::vector<std::function<void()>> while_stopped;
    std::vector<std::pair<int64_t, int64_t>> stops;  // when it is stopped
    std::vector<uint32_t> tiles;
    RttEstimate rtt;
  };

  void SetUpTiles();
  void SetUpNodes();
  void Tick(uint64_t tick);
  void StartFrame(Tile& t, uint32_t timestamp, int64_t window_ns);
  void BeginFrame(Tile& t, const Queued& f);
  void Burst(uint32_t tile);
  void Sent(uint32_t tile, std::vector<Datagram>&& datagrams);
  void Receive(uint32_t tile, const std::shared_ptr<std::vector<Datagram>>& batch);
  void Admit(Tile& t, const Datagram& d);
  void AskForLost(uint32_t tile);
  void EndStreams();
  void ScheduleDecide();
  void Decide();
  void AtNode(uint32_t node, const std::string& line);
  void Show(uint32_t node, const SyncEvent& e, bool excused);
  void AtServer(uint32_t node, const std::string& line);
  void Second();
  void LookAtNics();
  void ApplyFaults();
  bool Stopped(uint32_t node) const { return q_.now() < nodes_[node].stopped_until_ns; }
  // Runs `what` at the node now, or when it runs again.
  void OnNode(uint32_t node, std::function<void()> what);
  const std::byte* FrameOf(uint32_t tile, uint32_t timestamp);

  Scenario s_;
  EventQueue q_;
  SimSockets sockets_;
  Rng rng_;
  WallConfig c_;
  int64_t interval_ns_;
  std::vector<Tile> tiles_;
  std::vector<Node> nodes_;
  // The coordinator.
  TickShedder shedder_;
  SwapSyncMaster master_;
  PlayoutLatency latency_;
  std::vector<double> capacity_;      // bits per second per NIC; 0: unknown, no limit
  std::vector<int64_t> nic_free_ns_;  // when each NIC has sent what it was given
  // What a NIC's queue holds before a send blocks: a qdisc of 1000
  // datagrams (txqueuelen's default), as time at its speed.
  int64_t NicQueueNs(uint32_t nic) const {
    return capacity_[nic] > 0
               ? static_cast<int64_t>(1000.0 * (c_.stream.mtu + 14) * 8e9 / capacity_[nic])
               : 0;
  }
  std::vector<bool> nic_up_;
  std::vector<SyncEvent> events_;
  int64_t decide_at_ = INT64_MAX;
  int64_t next_tick_ns_ = 0;
  int64_t play_start_ns_ = 200'000'000;  // after the joins' round trips on a LAN
  int64_t play_end_ns_ = 0;
  uint32_t timestamp_base_ = 0x5eed0000;
  std::vector<int64_t> late_until_, late_by_;  // per tile: kRankLate
  // Pixels: kFrames frames per tile, and what each timestamp carried.
  static constexpr uint32_t kFrames = 4;
  std::vector<std::vector<std::byte>> pixels_;  // tile * kFrames + f; or one zero frame
  std::vector<uint64_t> checksums_;
  std::unordered_map<uint32_t, uint32_t> frame_of_timestamp_;
  // Per tick, the tiles that take part (as the master has it: at its
  // open and its release); per node, whether a
  // fault (its link down, stopped) may excuse a tile that did not show it.
  std::unordered_map<uint32_t, std::vector<bool>> takers_;
  std::vector<bool> faulted_;
  // Per released tick, when its tiles showed it on the virtual clock.
  struct Shows {
    int64_t first = INT64_MAX, last = INT64_MIN;
    uint32_t count = 0;
  };
  std::unordered_map<uint32_t, Shows> shows_;
  WallReport r_;
};

Wall::Wall(const Scenario& s)
    : s_(s),
      rng_(s.seed),
      c_([&] {
        auto c = ParseWallConfig(s.ConfigToml(), s.name);
        if (!c.ok()) throw std::runtime_error(c.status().message());
        return *c;
      }()),
      interval_ns_(static_cast<int64_t>(1e9 / c_.wall.fps)),
      master_(c_.tile_count(), c_.sync.partial, 3),
      latency_(c_.sync, interval_ns_) {
  capacity_ = NicCapacities(c_, 0, [&](const std::string&) -> std::optional<double> {
    if (s.kernel_nic_gbps > 0) return s.kernel_nic_gbps * 1e9;
    return std::nullopt;
  });
  nic_up_.assign(c_.nics.size(), true);
  nic_free_ns_.assign(c_.nics.size(), 0);
  late_until_.assign(c_.tile_count(), 0);
  late_by_.assign(c_.tile_count(), 0);
  SetUpNodes();
  SetUpTiles();
}

void Wall::SetUpNodes() {
  nodes_.resize(c_.nodes.size());
  faulted_.assign(nodes_.size(), false);
  for (const Fault& f : s_.faults)
    if ((f.kind == Fault::Kind::kNodeLinkDown || f.kind == Fault::Kind::kNodeStopped) &&
        f.which < nodes_.size())
      faulted_[f.which] = true;
  for (uint32_t n = 0; n < nodes_.size(); ++n) {
    Node& node = nodes_[n];
    PathSettings media = s_.path;  // its times from the start of play
    for (auto& d : media.down) d = {d.first + play_start_ns_, d.second + play_start_ns_};
    for (auto& b : media.bursts) b.first += play_start_ns_;
    if (s_.burst_node >= 0 && static_cast<uint32_t>(s_.burst_node) != n) media.bursts.clear();
    for (const Fault& f : s_.faults)
      if (f.kind == Fault::Kind::kNodeLinkDown && f.which == n)
        media.down.emplace_back(play_start_ns_ + static_cast<int64_t>(f.at_s * 1e9),
                                play_start_ns_ + static_cast<int64_t>((f.at_s + f.for_s) * 1e9));
    PathSettings back = media;
    back.bursts.clear();
    node.media = std::make_unique<Path>(media, rng_.Fork());
    node.feedback = std::make_unique<Path>(back, rng_.Fork());
    node.sync_out = std::make_unique<Path>(back, rng_.Fork());
    node.sync_back = std::make_unique<Path>(back, rng_.Fork());
    node.to_node = std::make_unique<TcpStream>(
        &q_, node.sync_out.get(),
        [this, n](const std::string& l) { OnNode(n, [=, this] { AtNode(n, l); }); });
    node.to_server = std::make_unique<TcpStream>(
        &q_, node.sync_back.get(), [this, n](const std::string& l) { AtServer(n, l); });
    node.clock_offset_ns =
        static_cast<int64_t>((rng_.Uniform() - 0.5) * s_.clock_offset_us * 1000.0);
  }
}

void Wall::SetUpTiles() {
  const uint32_t count = c_.tile_count();
  tiles_.resize(count);
  const size_t frame_bytes = c_.wall.tile.frame_bytes();
  if (s_.pixels) {
    pixels_.resize(size_t{count} * kFrames);
    for (uint32_t t = 0; t < count; ++t)
      for (uint32_t f = 0; f < kFrames; ++f) {
        auto& p = pixels_[size_t{t} * kFrames + f];
        p.resize(frame_bytes);
        Rng pattern(s_.seed * 1000003 + uint64_t{t} * kFrames + f);
        for (size_t i = 0; i < frame_bytes; i += 8) {
          const uint64_t v = pattern.Next();
          std::memcpy(p.data() + i, &v, std::min<size_t>(8, frame_bytes - i));
        }
        checksums_.push_back(Checksum(p));
      }
  } else {
    pixels_.emplace_back(frame_bytes);  // one frame of zeros: only headers are looked at
  }
  for (uint32_t i = 0; i < count; ++i) {
    Tile& t = tiles_[i];
    t.index = i;
    t.node = c_.routes[i].node;
    t.nic = c_.routes[i].nic;
    nodes_[t.node].tiles.push_back(i);
    master_.SetMember(i, true);
    // As streamer/tile_stream.cpp's SenderOptions.
    TileSenderOptions so;
    so.packetizer.tile = c_.wall.tile;
    so.packetizer.max_payload = c_.max_udp_payload();
    so.packetizer.packing = c_.stream.packing;
    so.packetizer.payload_type = c_.stream.payload_type;
    so.packetizer.ssrc = TileSsrc(i);
    so.socket.destination = "127.0.0.1";
    so.socket.port = 9;  // connected, never sent to: the calls are the simulation's
    so.socket.send_buffer = 65536;
    so.socket.calls = SimSockets::Calls();
    so.pacing = c_.stream.pacing;
    so.pacing_quantum_ns = int64_t{c_.stream.pacing_quantum_us} * 1000;
    so.max_burst_bytes = c_.stream.max_burst_bytes;
    so.pacing_phase = static_cast<double>(i) / count;
    so.retransmission = c_.routes[i].retransmission;
    so.retransmission_share = c_.stream.retransmission_share;
    so.rtx_payload_type = c_.stream.rtx_payload_type;
    so.rtx_ssrc = TileRtxSsrc(i);
    const double intervals =
        1 + static_cast<double>(c_.sync.latency_bound_ns()) * c_.wall.fps / 1e9;
    so.history_frames =
        c_.sync.timed()
            ? std::clamp<uint32_t>(static_cast<uint32_t>(std::ceil(intervals)) + 1, 3, 32)
            : 3;
    auto sender = TileSender::Create(so, q_.clock());
    if (!sender.ok()) throw std::runtime_error(sender.status().message());
    t.sender = std::move(sender).value();
    SimSockets::Endpoint e;
    e.whole = s_.pixels;
    e.rtx_payload_type = c_.stream.rtx_payload_type;
    e.refuse = [this, i]() -> int {
      if (!nic_up_[tiles_[i].nic]) return ENETDOWN;
      return rng_.Chance(s_.refused) ? EPERM : 0;
    };
    e.sent = [this, i](std::vector<Datagram>&& d) { Sent(i, std::move(d)); };
    sockets_.Attach(t.sender->socket().fd(), std::move(e));
    // As receiver/node_setup.cpp's TileOptions.
    t.plan = std::make_unique<Packetizer>(t.sender->packetizer());
    AssemblerOptions ao;
    ao.tile = c_.wall.tile;
    ao.ssrc = TileSsrc(i);
    ao.payload_type = c_.stream.payload_type;
    ao.queue_depth = c_.sync.queue_frames(c_.wall.fps);
    if (c_.routes[i].retransmission) {
      ao.rtx_payload_type = c_.stream.rtx_payload_type;
      ao.loss.window_ns = interval_ns_ + c_.sync.latency_bound_ns();
      ao.loss.reorder_ns = static_cast<int64_t>(c_.stream.reorder_ms * 1e6);
    }
    t.assembler = std::make_unique<FrameAssembler>(ao);
    if (ao.rtx_payload_type) t.assembler->ExpectPlan(t.plan.get());
  }
}

const std::byte* Wall::FrameOf(uint32_t tile, uint32_t timestamp) {
  if (!s_.pixels) return pixels_[0].data();
  const uint32_t f = frame_of_timestamp_[timestamp];
  return pixels_[size_t{tile} * kFrames + f].data();
}

// The coordinator's tick (streamer/coordinator.cpp): shed or sent on every
// tile, opened with the sync, its frames paced until the next tick sent.
void Wall::Tick(uint64_t tick) {
  next_tick_ns_ = q_.now() + interval_ns_;
  if (tick + 1 < static_cast<uint64_t>(std::llround(s_.seconds * c_.wall.fps)))
    q_.At(next_tick_ns_, [this, tick] { Tick(tick + 1); });
  ++r_.ticks;
  if (!shedder_.Keep()) return;
  const uint32_t next_in = shedder_.ticks_to_next();
  const uint32_t timestamp = RtpTimestampForTick(tick, c_.wall.fps, timestamp_base_);
  frame_of_timestamp_[timestamp] = static_cast<uint32_t>(tick % kFrames);
  for (Tile& t : tiles_) StartFrame(t, timestamp, next_in * interval_ns_);
  if (tick + 1 == static_cast<uint64_t>(std::llround(s_.seconds * c_.wall.fps)))
    q_.At(q_.now() + next_in * interval_ns_, [this] { EndStreams(); });
  // As streamer/wall_sync.cpp's OpenTick.
  const int64_t frame_end = q_.now() + next_in * interval_ns_;
  if (!latency_.timed()) {
    master_.OpenTick(tick, timestamp,
                     frame_end - interval_ns_ + c_.sync.deadline_after_tick_ns(c_.wall.fps));
  } else {
    master_.OpenTick(tick, timestamp, latency_.DeadlineFor(frame_end),
                     latency_.PresentAt(frame_end));  // the server's clock: offset 0
  }
  std::vector<bool>& takers = takers_[timestamp];  // who takes part as it opens
  takers.resize(tiles_.size());
  for (uint32_t t = 0; t < tiles_.size(); ++t)
    takers[t] = master_.member(t) && !master_.left_out(t);
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
// last of them.
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
  for (Datagram& d : datagrams)
    if (!path.LoseDatagram(departs)) batch->push_back(std::move(d));
  if (batch->empty()) return;
  const int64_t at = path.ArrivalNs(departs);
  q_.At(at, [this, tile, batch] { Receive(tile, batch); });
}

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
    if (t.stalled_bytes + bytes > c_.stream.receive_buffer) return;
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
    const uint32_t tile = t.index, ts = f->timestamp;
    nodes_[t.node].to_server->Send(FormatComplete(tile, ts));
  }
}

void Wall::AskForLost(uint32_t tile) {
  Tile& t = tiles_[tile];
  LossTracker* loss = t.assembler->loss();
  std::array<uint16_t, 256> due;
  std::array<std::byte, kNackHeaderSize + 256 * kNackEntrySize> packet;
  const size_t n = loss->TakeDue(due);
  if (n > 0 && t.assembler->ssrc()) {
    Node& node = nodes_[t.node];
    for (size_t done = 0; done < n;) {
      size_t taken = 0;
      const size_t size = WriteGenericNack(TileReceiverSsrc(tile), *t.assembler->ssrc(),
                                           {due.data() + done, n - done}, packet, &taken);
      loss->CountNack();
      done += taken;
      if (node.feedback->LoseDatagram(q_.now())) continue;
      auto nack = std::make_shared<std::vector<std::byte>>(packet.begin(), packet.begin() + size);
      q_.At(node.feedback->ArrivalNs(q_.now()), [this, tile, nack] {
        TileSender& s = *tiles_[tile].sender;
        if (SimSockets::Endpoint* e = sockets_.Find(s.socket().fd())) {
          e->feedback.push_back(*nack);
          s.AnswerFeedback();
        }
      });
    }
  }
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

// The decisions due, to every node over its sync connection.
void Wall::Decide() {
  events_.clear();
  master_.Decide(q_.now(), &events_);
  for (const SyncEvent& e : events_) {
    if (e.decision != SyncDecision::kSkip) {  // who must show it: took part at open and now
      std::vector<bool>& takers = takers_[e.timestamp];
      for (uint32_t t = 0; t < tiles_.size(); ++t)
        takers[t] = takers[t] && master_.member(t) && !master_.left_out(t);
    }
    const std::string line = FormatSyncEvent(e);
    for (Node& node : nodes_) node.to_node->Send(line);
  }
  ScheduleDecide();
}

// A display node's sync client and presenter (receiver/presenter.cpp): a
// decision shown at its moment of the node's clock, or at once.
void Wall::AtNode(uint32_t node, const std::string& line) {
  Node& n = nodes_[node];
  if (auto ping = ParseStamp("ping", line)) {
    n.to_server->Send(FormatPong(*ping));
    return;
  }
  const std::optional<SyncEvent> e = ParseSyncEvent(line);
  if (!e) return;
  if (e->decision == SyncDecision::kSkip) return;  // the presenter counts it, takes nothing
  const int64_t at = e->at_ns ? e->at_ns - n.clock_offset_ns : q_.now();
  // A path down in the last seconds excuses a late show: what it held
  // back arrives in a rush when it comes back.
  bool excused = n.sync_out->DownBetween(q_.now() - 3 * kSecond, q_.now());
  for (const auto& [from, to] : n.stops)  // or it was stopped, its socket holding them
    excused = excused || (from < q_.now() && to > q_.now() - 3 * kSecond);
  if (e->at_ns && at < q_.now()) ++(excused ? r_.late_decisions_path_down : r_.late_decisions);
  const SyncEvent event = *e;
  q_.At(at,
        [this, node, event, excused] { OnNode(node, [=, this] { Show(node, event, excused); }); });
}

// The node's tiles show the tick, each one's frame whole (and, with
// pixels, exact); the moment is reported as the node's clock reads it.
// The wall's skew on the virtual clock leaves out a show that a fault made
// late: its path down, or the node stopped at its moment.
void Wall::Show(uint32_t node, const SyncEvent& e, bool excused) {
  Node& n = nodes_[node];
  const int64_t shown = q_.now() + n.clock_offset_ns;
  for (const auto& [from, to] : n.stops)  // the node stopped lately: its shows wait
    excused = excused || (from < q_.now() && to > q_.now() - 3 * kSecond);
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
      if (it == frame_of_timestamp_.end() ||
          Checksum(px) != checksums_[size_t{t} * kFrames + it->second])
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

void Wall::AtServer(uint32_t node, const std::string& line) {
  if (auto pong = ParseStamp("pong", line)) {
    nodes_[node].rtt.Sample(q_.now() - *pong);
    return;
  }
  const std::optional<SyncReport> r = ParseSyncReport(line);
  if (!r || r->tile >= tiles_.size()) return;
  if (r->kind == SyncReport::Kind::kComplete) {
    master_.Complete(r->tile, r->timestamp);
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
  int64_t sync = 0, sync_var = 0, repair = 0, repair_var = 0;
  for (Node& n : nodes_) {
    n.to_node->Send(FormatStamp("ping", q_.now()));
    sync = std::max(sync, n.rtt.rtt_ns);
    sync_var = std::max(sync_var, n.rtt.rttvar_ns);
  }
  uint64_t sent = 0, skipped = 0;
  std::vector<uint32_t> nic_of_tile;
  for (Tile& t : tiles_) {
    if (const LossTracker* loss = t.assembler->loss()) {
      repair = std::max(repair, loss->stats().rtt.rtt_ns);
      repair_var = std::max(repair_var, loss->stats().rtt.rttvar_ns);
    }
    sent += t.sent_ticks;
    skipped += t.skipped_ticks;
    t.sent_ticks = t.skipped_ticks = 0;
    nic_of_tile.push_back(t.nic);
  }
  if (latency_.timed() && sync > 0) {
    const int64_t before = latency_.latency_ns();
    latency_.Update(sync, sync_var, repair, repair_var);
    if (latency_.latency_ns() != before)  // each tile's repair window follows it
      for (Tile& t : tiles_)
        if (LossTracker* loss = t.assembler->loss())
          loss->SetWindow(interval_ns_ + latency_.latency_ns());
  }
  shedder_.SetCeiling(FailoverCeiling(c_, nic_of_tile, capacity_));
  shedder_.Look(sent, skipped, static_cast<uint32_t>(tiles_.size()));
}

// streamer/nic_failover.cpp: a look every kLookNs, the tiles of a NIC
// that is down moved to the others (common/wall/nic_failover.h).
void Wall::LookAtNics() {
  if (q_.now() + kNicLookNs < play_end_ns_) q_.At(q_.now() + kNicLookNs, [this] { LookAtNics(); });
  const std::vector<uint32_t> plan = FailoverNics(c_, nic_up_);
  for (Tile& t : tiles_) t.nic = plan[t.index];
}

void Wall::ApplyFaults() {
  for (const Fault& f : s_.faults) {
    const auto from = play_start_ns_ + static_cast<int64_t>(f.at_s * 1e9);
    const auto to = play_start_ns_ + static_cast<int64_t>((f.at_s + f.for_s) * 1e9);
    switch (f.kind) {
      case Fault::Kind::kNicDown:
        q_.At(from, [this, f] { nic_up_[f.which] = false; });
        q_.At(to, [this, f] { nic_up_[f.which] = true; });
        break;
      case Fault::Kind::kNodeStopped:
        nodes_[f.which].stops.emplace_back(from, to);
        q_.At(from, [this, f, to] { nodes_[f.which].stopped_until_ns = to; });
        q_.At(to, [this, f] {
          auto pending = std::move(nodes_[f.which].while_stopped);
          nodes_[f.which].while_stopped.clear();
          for (auto& what : pending) what();
        });
        break;
      case Fault::Kind::kRankLate:
        q_.At(from, [this, f, to] { late_until_[f.which] = to; });
        late_by_[f.which] = static_cast<int64_t>(f.late_ms * 1e6);
        break;
      case Fault::Kind::kNodeLinkDown:  // in its paths (SetUpNodes)
        break;
    }
  }
}

WallReport Wall::Run() {
  const double cpu = CpuSeconds();
  ApplyFaults();
  // The nodes join and are pinged three times, as the control server does.
  for (int i = 0; i < 3; ++i)
    for (Node& n : nodes_) n.to_node->Send(FormatStamp("ping", q_.now()));
  const int64_t start = play_start_ns_;
  play_end_ns_ = start + static_cast<int64_t>(s_.seconds * 1e9);
  // The latency from the joins' round trips before tick 0, as the
  // coordinator's WaitForDisplayNodes has it.
  q_.At(start, [this] { Second(); });
  q_.At(start, [this] { Tick(0); });
  q_.At(start, [this] { LookAtNics(); });
  // The last frames go out and are decided, as the coordinator waits.
  const int64_t end = play_end_ns_ + c_.sync.deadline_after_tick_ns(c_.wall.fps) + kSecond;
  r_.events = q_.RunUntil(end);

  const SyncStats& st = master_.stats();
  r_.presented = st.presented;
  r_.skipped = st.skipped;
  r_.partial = st.partial;
  r_.left_out = st.left_out;
  r_.shed = shedder_.shed();
  r_.shed_keep = shedder_.keep();
  r_.shed_ceiling = shedder_.ceiling();
  r_.skew_p99_ms = master_.skews().QuantileNs(0.99) / 1e6;
  r_.skew_max_ms = st.skew_max_ns / 1e6;
  SkewHistogram skews;
  for (const auto& [timestamp, when] : shows_)
    if (when.count >= 2) skews.Add(when.last - when.first);
  r_.virtual_skew_p99_ms = skews.QuantileNs(0.99) / 1e6;
  r_.latency_ms = latency_.timed() ? latency_.latency_ns() / 1e6 : 0;
  for (Node& n : nodes_) {
    r_.tcp_probes += n.to_node->probes() + n.to_server->probes();
    r_.tcp_timeouts += n.to_node->timeouts() + n.to_server->timeouts();
  }
  for (Tile& t : tiles_) {
    TileCounters& k = t.counters;
    const AssemblerStats& a = t.assembler->stats();
    k.complete = a.frames_complete;
    k.incomplete = a.frames_incomplete;
    k.lost = a.lost;
    k.recovered = a.recovered;
    if (const LossTracker* loss = t.assembler->loss()) {
      k.unrecoverable = loss->stats().unrecoverable;
      k.nack_requested = loss->stats().requested;
      k.repair_rtt_ms = loss->stats().rtt.rtt_ns / 1e6;
    }
    k.retransmitted = t.sender->stats().retransmitted;
    k.refused_cap = t.sender->stats().refused_cap;
    k.refused_sends = t.sender->socket().stats().dropped;
    r_.tiles.push_back(k);
    sockets_.Detach(t.sender->socket().fd());
  }
  r_.wall_seconds = s_.seconds;
  r_.cpu_seconds = CpuSeconds() - cpu;
  return r_;
}

}  // namespace

WallReport RunWall(const Scenario& s) { return Wall(s).Run(); }

}  // namespace tilestream::sim
