// The simulated wall set up from its scenario, run, and reported
// (sim/wall.h has its parts).
#include "sim/wall_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "common/control/skew_histogram.h"
#include "common/receive/wall_assembler_options.h"
#include "common/send/wall_sender_options.h"
#include "common/wall/layout.h"
#include "common/wall/nic_failover.h"
#include "sim/wall.h"

namespace tilestream::sim {

namespace {

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

}  // namespace

uint64_t Checksum(std::span<const std::byte> pixels) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (std::byte b : pixels) h = (h ^ static_cast<uint8_t>(b)) * 1099511628211ULL;
  return h;
}

Wall::Wall(const Scenario& s)
    : s_(s),
      rng_(s.seed),
      c_([&] {
        auto c = ParseWallConfig(s.ConfigToml(), s.name);
        if (!c.ok()) throw std::runtime_error(c.status().message());
        return *c;
      }()),
      interval_ns_(static_cast<int64_t>(1e9 / c_.wall.fps)),
      playback_(kFrames, c_.wall.fps),
      movies_(c_.tile_count(), {"A", "", kFrames}),
      master_(c_.tile_count(), c_.sync.partial, 3),
      latency_(c_.sync, interval_ns_, static_cast<int64_t>(c_.stream.reorder_ms * 1e6),
               c_.stream.retransmission_share) {
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
    if ((f.kind == Fault::Kind::kNodeLinkDown || f.kind == Fault::Kind::kNodeStopped ||
         f.kind == Fault::Kind::kNodeDies) &&
        f.which < nodes_.size())
      faulted_[f.which] = true;
  for (uint32_t n = 0; n < nodes_.size(); ++n) {
    Node& node = nodes_[n];
    PathSettings media = s_.path;  // its times from the start of play
    for (auto& d : media.down) d = {d.first + play_start_ns_, d.second + play_start_ns_};
    for (auto& b : media.bursts) b.first += play_start_ns_;
    if (s_.burst_node >= 0 && static_cast<uint32_t>(s_.burst_node) != n) media.bursts.clear();
    const auto down_for = [&](Fault::Kind kind, PathSettings* path) {
      for (const Fault& f : s_.faults)
        if (f.kind == kind && f.which == n)
          path->down.emplace_back(play_start_ns_ + static_cast<int64_t>(f.at_s * 1e9),
                                  play_start_ns_ + static_cast<int64_t>((f.at_s + f.for_s) * 1e9));
    };
    down_for(Fault::Kind::kNodeLinkDown, &media);
    PathSettings back = media;
    back.bursts.clear();
    PathSettings datagrams = back;  // the sync's: a firewall may drop them alone
    down_for(Fault::Kind::kSyncUdpBlocked, &datagrams);
    node.media = std::make_unique<Path>(media, rng_.Fork());
    node.feedback = std::make_unique<Path>(back, rng_.Fork());
    node.sync_out = std::make_unique<Path>(back, rng_.Fork());
    node.sync_back = std::make_unique<Path>(back, rng_.Fork());
    node.datagrams_out = std::make_unique<Path>(datagrams, rng_.Fork());
    node.datagrams_back = std::make_unique<Path>(datagrams, rng_.Fork());
    node.to_node = std::make_unique<TcpStream>(
        &q_, node.sync_out.get(),
        [this, n](const std::string& l) { OnNode(n, [=, this] { AtNode(n, l); }); });
    node.to_server = std::make_unique<TcpStream>(
        &q_, node.sync_back.get(), [this, n](const std::string& l) { AtServer(n, l); });
    node.key = 0x5eed'0000'0000'0000ULL + n;
    node.leader = std::make_unique<TickLeader>(c_.tile_count(), c_.sync.partial);
    node.clock_offset_ns =
        static_cast<int64_t>((rng_.Uniform() - 0.5) * s_.clock_offset_us * 1000.0);
    if (s_.clock_drift_ppm > 0)
      node.clock_drift = (2 * rng_.Uniform() - 1) * s_.clock_drift_ppm / 1e6;
    PathSettings lan = s_.lan;  // a link down takes the node off the LAN too
    down_for(Fault::Kind::kNodeLinkDown, &lan);
    node.lan = std::make_unique<Path>(lan, rng_.Fork());
  }
}

void Wall::SetUpTiles() {
  const uint32_t count = c_.tile_count();
  tiles_.resize(count);
  const size_t frame_bytes = c_.wall.tile.frame_bytes();
  if (s_.pixels) {
    uint32_t movies = 1;
    for (const Fault& f : s_.faults)
      movies += f.kind == Fault::Kind::kLoad || f.kind == Fault::Kind::kLoadFails;
    pixels_.resize(size_t{movies} * count * kFrames);
    for (size_t i = 0; i < pixels_.size(); ++i) {  // in PixelIndex's order
      auto& p = pixels_[i];
      p.resize(frame_bytes);
      Rng pattern(s_.seed * 1000003 + i);
      for (size_t b = 0; b < frame_bytes; b += 8) {
        const uint64_t v = pattern.Next();
        std::memcpy(p.data() + b, &v, std::min<size_t>(8, frame_bytes - b));
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
    // As the streamer's tile streams set it up, its socket the simulation's.
    TileSenderOptions so = WallSenderOptions(c_, i, static_cast<double>(i) / count);
    so.socket.destination = "127.0.0.1";
    so.socket.port = 9;  // connected, never sent to: the calls are the simulation's
    so.socket.source_address.clear();
    so.socket.device.clear();
    so.socket.send_buffer = 65536;
    so.socket.calls = SimSockets::Calls();
    auto sender = TileSender::Create(so, q_.clock());
    if (!sender.ok()) throw std::runtime_error(sender.status().message());
    t.sender = std::move(sender).value();
    SimSockets::Endpoint e;
    e.whole = s_.pixels;
    e.rtx_payload_type = c_.stream.rtx_payload_type;
    e.refuse = [this, i] { return Refusal(i); };
    e.sent = [this, i](std::vector<Datagram>&& d) { Sent(i, std::move(d)); };
    sockets_.Attach(t.sender->socket().fd(), std::move(e));
    // As a display node sets it up.
    t.plan = std::make_unique<Packetizer>(t.sender->packetizer());
    AssemblerOptions ao = WallAssemblerOptions(c_, i, true, c_.routes[i].retransmission);
    ao.prefault = false;  // pages written only where pixels are (pixels-*, retransmissions)
    t.assembler = std::make_unique<FrameAssembler>(ao);
    if (ao.rtx_payload_type) t.assembler->ExpectPlan(t.plan.get());
  }
}

// What the kernel says to one of tile's messages: 0, it goes.
int Wall::Refusal(uint32_t tile) {
  if (tiles_[tile].sends_fail) return EBADF;
  if (!nic_up_[tiles_[tile].nic]) return ENETDOWN;
  if (!rng_.Chance(s_.refused)) return 0;
  if (s_.refused_errnos.empty()) return EPERM;
  return s_.refused_errnos[rng_.Next() % s_.refused_errnos.size()];
}

// Its receiver killed: the node shows and reads nothing more; the kernel
// closes its sync connection, and the coordinator sees it one way later.
void Wall::NodeDies(uint32_t node) {
  Node& n = nodes_[node];
  n.stopped_until_ns = INT64_MAX;
  n.stops.emplace_back(q_.now(), INT64_MAX);
  q_.At(q_.now() + n.sync_back->one_way_ns(), [this, node] {
    std::vector<bool> gone(tiles_.size(), false);
    for (uint32_t t : nodes_[node].tiles) {
      master_.SetMember(t, false);
      gone[t] = true;
    }
    nodes_[node].datagrams_seen = false;
    if (leader_ == static_cast<int>(node))
      GiveUpLeader();
    else if (leader_ >= 0)
      ToLeader(FormatGone(gone));
  });
}

const std::byte* Wall::FrameOf(uint32_t tile, uint32_t timestamp) {
  if (!s_.pixels) return pixels_[0].data();
  return pixels_[PixelIndex(tile, frame_of_timestamp_[timestamp])].data();
}

// `load`: the coordinator tells every tile rank; each reports its pre-roll
// (its files opened, the first frames read: 20 to 300 ms) or, for a tile
// that cannot open the movie, its error, which abandons the load.
void Wall::Load(const Fault& f) {
  const uint64_t generation =
      movies_.Begin({fmt::format("movie{}", movies_.sent() + 1), "", kFrames}, 0);
  for (uint32_t t = 0; t < tiles_.size(); ++t) {
    const bool ok = f.kind == Fault::Kind::kLoad || t != f.which;
    const auto pre_roll = static_cast<int64_t>((0.02 + 0.28 * rng_.Uniform()) * 1e9);
    q_.At(q_.now() + pre_roll, [this, generation, t, ok] {
      if (auto error = movies_.Loaded(generation, t, ok, "No such file",
                                      TileId::FromIndex(t, c_.wall.layout).Name()))
        r_.load_errors.push_back(*error);
    });
  }
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
      case Fault::Kind::kSyncUdpBlocked:
        break;
      case Fault::Kind::kNodeDies:
        q_.At(from, [this, f] { NodeDies(f.which); });
        break;
      case Fault::Kind::kLoad:
      case Fault::Kind::kLoadFails:
        q_.At(from, [this, f] { Load(f); });
        break;
      case Fault::Kind::kSendsFail:
        q_.At(from, [this, f] { tiles_[f.which].sends_fail = true; });
        break;
    }
  }
}

WallReport Wall::Run() {
  const double cpu = CpuSeconds();
  ApplyFaults();
  // The nodes join, each pinged as the control server does.
  for (uint32_t n = 0; n < nodes_.size(); ++n) Ping(n, nodes_[n].trip.Joined());
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
  r_.repair_rounds = latency_.timed() ? latency_.repair_rounds() : 0;
  for (Node& n : nodes_) {
    r_.tcp_probes += n.to_node->probes() + n.to_server->probes();
    r_.tcp_timeouts += n.to_node->timeouts() + n.to_server->timeouts();
    r_.lost_on_paths += n.media->lost();
  }
  for (Tile& t : tiles_) {
    TileCounters& k = t.counters;
    const AssemblerStats& a = t.assembler->stats();
    k.complete = a.frames_complete;
    k.incomplete = a.frames_incomplete;
    k.lost = a.lost;
    k.recovered = a.recovered;
    r_.duplicates += a.duplicate;
    if (const LossTracker* loss = t.assembler->loss()) {
      k.unrecoverable = loss->stats().unrecoverable;
      k.nack_requested = loss->stats().requested;
      k.nack_asked_again = loss->stats().asked_again;
      k.repair_rtt_ms = loss->stats().rtt.rtt_ns / 1e6;
      k.repair_rttvar_ms = loss->stats().rtt.rttvar_ns / 1e6;
    }
    k.retransmitted = t.sender->stats().retransmitted;
    k.refused_cap = t.sender->stats().refused_cap;
    k.refused_sends = t.sender->socket().stats().dropped;
    r_.tiles.push_back(k);
    sockets_.Detach(t.sender->socket().fd());
  }
  r_.movie_generation = movies_.playing_generation();
  r_.wall_seconds = s_.seconds;
  r_.cpu_seconds = CpuSeconds() - cpu;
  return r_;
}

WallReport RunWall(const Scenario& s) { return Wall(s).Run(); }

}  // namespace tilestream::sim
