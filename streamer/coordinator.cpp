#include "streamer/coordinator.h"

#include <arpa/inet.h>
#include <unistd.h>

#include "common/control/movie_listing.h"
#include "common/control/movie_loads.h"
#include "streamer/coordinator_impl.h"
#include "streamer/placement.h"
#include "streamer/sdp_files.h"

namespace tilestream {
namespace {

constexpr int64_t kReadyTimeoutNs = 60 * kSecond;

}  // namespace

int Coordinator::Run() {
  if (!Start()) {
    Broadcast(TickCommand::kStop, 0, 0);
    return 1;
  }
  if (!options_.bench) {
    SetUpPlayback();
    if (!wall_.live_movie.empty()) {  // --movie NAME of a live source
      if (auto r = movies_.Load(wall_.live_movie, 0); !r.ok()) {
        spdlog::error("--movie {}: {}", wall_.live_movie, r.status().message());
        Broadcast(TickCommand::kStop, 0, 0);
        return 1;
      }
    }
    if (c_.sync.enabled) WaitForDisplayNodes();
  }
  start_ns_ = clock_.NowNs();
  for (int64_t& h : heard_ns_) h = start_ns_;
  const bool ok = options_.bench ? RunBench() : RunPlay();
  LowerClock();
  tick_timing_.shed = shedder_.shed();
  tick_timing_.shed_cuts = shedder_.cuts();
  Broadcast(TickCommand::kStop, 0, 0);
  CollectFinal();
  PrintFinal();
  return ok ? 0 : kExitPeerGone;
}

bool Coordinator::Start() {
  if (const Status s = CheckPlacement(c_, plan_, 0, ThisHost()); !s.ok()) {
    spdlog::error("{}", s.message());
    return false;
  }
  if (!CollectReady()) return false;
  if (const Status s = movies_.StartLive(getpid()); !s.ok()) {
    spdlog::error("{}", s.message());
    return false;
  }
  if (!options_.sdp_dir.empty()) {
    if (const Status s = WriteSdpFiles(c_, options_.sdp_dir); !s.ok()) {
      spdlog::error("{}", s.message());
      return false;
    }
  }
  auto server = ControlServer::Open(
      c_, &sync_.master(), [this](const std::string& line) { return commands_.Handle(line); });
  if (!server.ok()) {
    spdlog::error("{}", server.status().message());
    return false;
  }
  server_ = std::move(server).value();
  sync_.Attach(server_.get());
  return StartHttp();
}

void Coordinator::SetUpPlayback() {
  playback_.emplace(wall_.movie ? wall_.movie->frames : 2 /* the synthetic pattern's */,
                    c_.wall.fps, c_.joystick);
  commands_.set_playback(&*playback_);
  if (!movies_.has_movies()) return;
  commands_.set_movie_list(movies_.Lister());
  commands_.set_movie_loader(
      [this](const std::string& name, uint64_t frame) { return movies_.Load(name, frame); });
  commands_.set_playlist(movies_.playlist(), [this](const std::string& name) {
    return movies_.Loadable(name, 0).status();
  });
}

bool Coordinator::CollectReady() {
  std::vector<ReadyMessage> messages(tiles_);
  if (!ReceiveReady(&messages)) return false;
  fmt::print("{}", PlanReport(wall_, options_, plan_, messages, comm_.size));
  std::fflush(stdout);
  return true;
}

bool Coordinator::ReceiveReady(std::vector<ReadyMessage>* messages) {
  std::vector<bool> ready(tiles_, false);
  bool all_ok = true;
  uint32_t count = 0;
  const int64_t give_up = clock_.NowNs() + kReadyTimeoutNs;
  while (count < tiles_) {
    ReadyMessage m;
    int from = 0;
    if (!TryReceive(comm_.comm, MPI_ANY_SOURCE, kTagReady, &m, &from)) {
      if (stop_->load() || clock_.NowNs() > give_up) {
        for (uint32_t t = 0; t < tiles_; ++t)
          if (!ready[t])
            spdlog::error("tile {} (rank {}) did not report ready", TileName(c_, t), plan_.rank(t));
        return false;
      }
      Sleep(1'000'000);
      continue;
    }
    m.message[sizeof m.message - 1] = '\0';
    m.host[sizeof m.host - 1] = '\0';
    ArmDoorbell(from, &m);
    for (uint32_t t : plan_.tiles(from)) {
      if (ready[t] || (m.tile != t && m.tile != kAllTiles)) continue;
      (*messages)[t] = m;
      hosts_[t] = m.host;
      ready[t] = true;
      ++count;
      if (m.ok) continue;
      all_ok = false;
      spdlog::error("tile {} (rank {}{}): {}", TileName(c_, t), plan_.rank(t), OnServer(t),
                    m.message);
    }
  }
  return all_ok;
}

void Coordinator::ArmDoorbell(int rank, ReadyMessage* m) {
  const in_addr address{m->doorbell_address};
  if (!doorbells_ || m->doorbell_port > 0xffff ||
      (ntohl(address.s_addr) == INADDR_LOOPBACK && !SameHost(m->host, ThisHost())))
    m->doorbell_port = 0;
  if (m->doorbell_port != 0)
    doorbells_->Arm(rank, address, static_cast<uint16_t>(m->doorbell_port));
}

void Coordinator::WaitForDisplayNodes() {
  const int64_t give_up = clock_.NowNs() + int64_t{c_.sync.wait_ms} * 1'000'000;
  while (server_->synced_nodes() < c_.nodes.size() && clock_.NowNs() < give_up && !stop_->load())
    server_->Poll(10'000'000);
  // A latency from the round trips: each node's settled (by datagram, or
  // three by line: common/control/node_round_trip.h).
  // A node whose ping or pong was lost is pinged again (every 200 ms).
  int64_t ping_again = clock_.NowNs() + kPingAgainNs;
  while (sync_.timed() && server_->LargestRtt().samples < server_->synced_nodes() &&
         clock_.NowNs() < give_up && !stop_->load()) {
    server_->Poll(10'000'000);
    if (clock_.NowNs() < ping_again) continue;
    server_->PingSyncNodes(/*unsettled_only=*/true);
    ping_again = clock_.NowNs() + kPingAgainNs;
  }
  sync_.UpdateLatency();
  if (server_->synced_nodes() == c_.nodes.size()) return;
  std::string missing;
  for (uint32_t n = 0; n < c_.nodes.size(); ++n) {
    bool synced = false;
    for (uint32_t t = 0; t < tiles_; ++t)
      synced = synced || (c_.routes[t].node == n && sync_.master().member(t));
    if (!synced) missing += (missing.empty() ? "" : ", ") + c_.nodes[n].name;
  }
  spdlog::warn("swap sync: starting without display node(s) {} (they join when they connect)",
               missing);
}

int RunCoordinator(const WallComm& comm, const StreamerOptions& options, const Wall& wall,
                   const std::atomic<bool>* stop) {
  return Coordinator(comm, options, wall, stop).Run();
}

}  // namespace tilestream
