#include "streamer/coordinator.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <vector>

#include "common/base/clock.h"
#include "common/base/realtime.h"
#include "common/control/control_commands.h"
#include "common/control/movie_listing.h"
#include "common/control/movie_loads.h"
#include "common/control/playback.h"
#include "common/control/tick_shedder.h"
#include "common/net/link_speed.h"
#include "common/wall/nic_failover.h"
#include "common/wall/server_hosts.h"
#include "streamer/control_server.h"
#include "streamer/doorbell.h"
#include "streamer/http_api.h"
#include "streamer/placement.h"
#include "streamer/rank_messages.h"
#include "streamer/rank_plan.h"
#include "streamer/refusal_log.h"
#include "streamer/report.h"
#include "streamer/sdp_files.h"
#include "streamer/thumbnail_board.h"
#include "streamer/thumbnail_inbox.h"
#include "streamer/wall_metrics.h"
#include "streamer/wall_movies.h"
#include "streamer/wall_shedding.h"
#include "streamer/wall_status.h"
#include "streamer/wall_sync.h"

namespace tilestream {
namespace {

constexpr int64_t kSecond = kNsPerSecond;
constexpr int64_t kReadyTimeoutNs = 60 * kSecond;
constexpr int64_t kTileSilenceNs = 3 * kSecond / 2;  // tiles report every 250 ms
// A silent tile is looked for this long more (rank_messages.h, MessageWithin):
// 1.6 s in all, before mpirun's own abort at 2 s.
constexpr int kConfirmSilenceMs = 100;
constexpr int64_t kFinalStatsTimeoutNs = 2 * kSecond;
constexpr int64_t kHealthCheckNs = 50'000'000;  // playing, tiles' silence is checked this often

std::string TileName(const WallConfig& c, uint32_t tile) {
  return TileId::FromIndex(tile, c.wall.layout).Name();
}

class Coordinator {
 public:
  Coordinator(const WallComm& comm, const StreamerOptions& options, const Wall& wall,
              const std::atomic<bool>* stop)
      : comm_(comm),
        options_(options),
        wall_(wall),
        c_(wall.config),
        stop_(stop),
        tiles_(c_.tile_count()),
        latest_(tiles_),
        previous_(tiles_),
        heard_ns_(tiles_, 0),
        hosts_(tiles_),
        final_(tiles_, false),
        plan_(c_, static_cast<uint32_t>(std::max(1, comm.size - 1))),
        sync_(c_) {
    for (uint32_t t = 0; t < tiles_; ++t) latest_[t].nic = c_.routes[t].nic;  // until it reports
    if (auto d = DoorbellRinger::Open(comm.size); d.ok())
      doorbells_.emplace(std::move(d).value());
    else  // the tile ranks poll MPI instead
      spdlog::warn("{}", d.status().message());
  }

  int Run() {
    if (const Status s = CheckPlacement(c_, plan_, 0, ThisHost()); !s.ok()) {
      spdlog::error("{}", s.message());
      Broadcast(TickCommand::kStop, 0, 0);
      return 1;
    }
    if (!CollectReady()) {
      Broadcast(TickCommand::kStop, 0, 0);
      return 1;
    }
    if (!options_.sdp_dir.empty()) {
      if (const Status s = WriteSdpFiles(c_, options_.sdp_dir); !s.ok()) {
        spdlog::error("{}", s.message());
        Broadcast(TickCommand::kStop, 0, 0);
        return 1;
      }
    }
    auto server = ControlServer::Open(
        c_, &sync_.master(), [this](const std::string& line) { return commands_.Handle(line); });
    if (!server.ok()) {
      spdlog::error("{}", server.status().message());
      Broadcast(TickCommand::kStop, 0, 0);
      return 1;
    }
    server_ = std::move(server).value();
    sync_.Attach(server_.get());
    if (!StartHttp()) {
      Broadcast(TickCommand::kStop, 0, 0);
      return 1;
    }
    if (!options_.bench) {
      playback_.emplace(wall_.movie ? wall_.movie->frames : 2 /* the synthetic pattern's */,
                        c_.wall.fps, c_.joystick);
      commands_.set_playback(&*playback_);
      if (!c_.library_path.empty()) {
        commands_.set_movie_list(LibraryLister(c_, movies_.presence()));
        commands_.set_movie_loader(
            [this](const std::string& name, uint64_t frame) { return movies_.Load(name, frame); });
        commands_.set_playlist(movies_.playlist(), [this](const std::string& name) {
          return LoadableMovie(c_, name, 0, movies_.presence()).status();
        });
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

 private:
  // Every tile's ready message, then the plan (always: it maps ranks to
  // tiles when a rank dies). False (said) when a tile failed or was silent.
  bool CollectReady() {
    std::vector<ReadyMessage> messages(tiles_);
    if (!ReceiveReady(&messages)) return false;
    fmt::print("{}", PlanReport(wall_, options_, plan_, messages, comm_.size));
    std::fflush(stdout);
    return true;
  }

  // A message per tile, or one for all tiles of a rank that could not set
  // up at all.
  bool ReceiveReady(std::vector<ReadyMessage>* messages) {
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
              spdlog::error("tile {} (rank {}) did not report ready", TileName(c_, t),
                            plan_.rank(t));
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

  // A rank that listens on loopback is rung only from its own host; one on
  // the management network from anywhere (streamer/doorbell.h). One not
  // armed has its port cleared: the plan says it polls.
  void ArmDoorbell(int rank, ReadyMessage* m) {
    const in_addr address{m->doorbell_address};
    if (!doorbells_ || m->doorbell_port > 0xffff ||
        (ntohl(address.s_addr) == INADDR_LOOPBACK && !SameHost(m->host, ThisHost())))
      m->doorbell_port = 0;
    if (m->doorbell_port != 0)
      doorbells_->Arm(rank, address, static_cast<uint16_t>(m->doorbell_port));
  }

  // Tick 0 shows on every tile only if every display node has joined the
  // swap sync: give them sync.wait_ms, then start without the missing ones.
  void WaitForDisplayNodes() {
    const int64_t give_up = clock_.NowNs() + int64_t{c_.sync.wait_ms} * 1'000'000;
    while (server_->synced_nodes() < c_.nodes.size() && clock_.NowNs() < give_up && !stop_->load())
      server_->Poll(10'000'000);
    // A latency from the round trips: each node's first one (asked at its join).
    while (sync_.timed() && server_->LargestRtt().samples < server_->synced_nodes() &&
           clock_.NowNs() < give_up && !stop_->load())
      server_->Poll(10'000'000);
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

  // The frame clock: tick k at start + k / fps; every tile sends the frame
  // the playback state gives for that tick, with the same RTP timestamp.
  // Commands change the state between ticks, so every tile sees a change at
  // the same tick.
  bool RunPlay() {
    RaiseClock();
    const int64_t interval = static_cast<int64_t>(kSecond / c_.wall.fps);
    std::random_device random;
    const uint32_t timestamp_base = random();
    int64_t next_second = start_ns_ + kSecond;
    int64_t last_deadline = 0;  // of the last tick sent
    for (uint64_t tick = 0;; ++tick) {
      const int64_t due = start_ns_ + static_cast<int64_t>(tick * kSecond / c_.wall.fps);
      while (clock_.NowNs() < due) {
        if (stop_->load() || commands_.stop_requested()) return true;
        Drain();
        if (const Health h = CheckAlive(); h != Health::kAlive) return h == Health::kStopping;
        if (clock_.NowNs() >= next_second) {
          PrintSecond();
          next_second += kSecond;
        }
        // One wake-up per event: the tick, a sync deadline, the second's
        // line, a control line; 50 ms at most, for the health checks.
        const int64_t now = clock_.NowNs();
        Wait(std::min({due, next_second, sync_.next_deadline_ns(), now + kHealthCheckNs}) - now);
      }
      if (stop_->load() || commands_.stop_requested() ||
          (options_.ticks && tick >= options_.ticks) || TimeUp())
        break;
      commands_.set_tick(tick);
      movies_.BeforeTick(tick, &*playback_);
      const bool send = playback_->ShouldSend(tick);
      const int32_t step = playback_->read_ahead_step();
      const uint64_t frame = playback_->Advance();
      movies_.AfterTick(frame, *playback_);
      if (!send) continue;  // paused: the frame is repeated at a low rate only
      if (options_.shed && !shedder_.Keep()) continue;  // overloaded: dropped on every tile
      // Its frames may take until the next tick sent, and its deadline moves with that.
      const uint32_t next_in = options_.shed ? shedder_.ticks_to_next() : 1;
      const uint32_t timestamp = RtpTimestampForTick(tick, c_.wall.fps, timestamp_base);
      const int64_t sending = clock_.NowNs();
      Broadcast(TickCommand::kPlay, tick, frame, timestamp, interval, step, next_in);
      CountTick(sending - due, clock_.NowNs() - sending, interval);
      last_deadline = sync_.OpenTick(tick, timestamp, due + next_in * interval);
    }
    // The last frames are out (a rank still sending takes this after
    // them): the tiles say BYE now, so that a lost tail of the last frame
    // is asked for before its tick's deadline, not after the stop.
    Broadcast(TickCommand::kEnd, 0, 0);
    // Let the last frames go out and be decided before stopping.
    const int64_t end =
        std::max(last_deadline, clock_.NowNs() + c_.sync.deadline_after_tick_ns(c_.wall.fps));
    while (clock_.NowNs() < end) Wait(1'000'000);
    return true;
  }

  // The frame clock at SCHED_FIFO, within a budget (common/base/realtime.h,
  // docs/decisions.md): on a busy server a tick that waits behind the tile
  // ranks reaches every tile late. Only this thread; the HTTP side's
  // threads are running already.
  void RaiseClock() {
    if (options_.clock_priority == 0) return;
    clock_priority_.emplace(options_.clock_priority, clock_.NowNs());
    tick_timing_.real_time = clock_priority_->real_time();
    if (!clock_priority_->status().ok()) {
      spdlog::info("the frame clock runs at normal priority ({})",
                   clock_priority_->status().message());
      clock_priority_.reset();
    }
  }
  void LowerClock() {
    if (clock_priority_) tick_timing_.windows_over_budget = clock_priority_->windows_over_budget();
    clock_priority_.reset();
  }

  void CountTick(int64_t late_ns, int64_t broadcast_ns, int64_t interval) {
    ++tick_timing_.sent;
    tick_timing_.late += late_ns > interval / 4;
    tick_timing_.max_late_ns = std::max(tick_timing_.max_late_ns, late_ns);
    tick_timing_.max_broadcast_ns = std::max(tick_timing_.max_broadcast_ns, broadcast_ns);
  }

  WallStatusView StatusView() const {
    return {c_,
            plan_,
            sync_.master(),
            server_->synced_nodes(),
            last_second_,
            latest_,
            server_->receiver_stats(),
            shedder_,
            sync_.latency_ns(),
            NodeRtts()};
  }
  std::vector<RttEstimate> NodeRtts() const {
    std::vector<RttEstimate> rtt;
    for (uint32_t n = 0; n < c_.nodes.size(); ++n) rtt.push_back(server_->NodeRtt(n));
    return rtt;
  }

  // What status adds to the playback state (streamer/wall_status.h).
  void StatusFields(nlohmann::json* out) const {
    AddWallStatus(StatusView(), out);
    movies_.AddStatus(out);
  }

  // The panel, REST API, live picture and /metrics (streamer/http_api.h),
  // served from the control listener's poll. False (said) if it cannot listen.
  bool StartHttp() {
    WallEndpoints wall;
    wall.command = [this](std::string_view line) { return commands_.Handle(line); };
    wall.metrics = [this] { return WallMetrics(StatusView(), playback_ ? &*playback_ : nullptr); };
    wall.wall_picture = [this] { return thumbnails_.Wall(); };
    wall.tile_picture = [this](std::string_view tile) { return thumbnails_.Tile(tile); };
    if (!c_.library_path.empty()) wall.movies = LibraryLister(c_, movies_.presence());
    auto http = HttpApi::Start(c_, std::move(wall));
    if (!http.ok()) {
      spdlog::error("{}", http.status().message());
      return false;
    }
    http_ = std::move(http).value();
    if (!http_) return true;
    server_->Watch(http_->fd(), [this] { http_->RunPending(); });
    spdlog::info("panel, REST API and /metrics on http://{}:{}/", c_.http.listen_address,
                 http_->port());
    return true;
  }

  bool RunBench() {
    Broadcast(TickCommand::kHeartbeat, 0, 0);  // go
    int64_t next_second = start_ns_ + kSecond;
    while (!stop_->load() && !commands_.stop_requested() && !TimeUp()) {
      Drain();
      if (const Health h = CheckAlive(); h != Health::kAlive) return h == Health::kStopping;
      if (clock_.NowNs() >= next_second) {
        PrintSecond();
        Broadcast(TickCommand::kHeartbeat, 0, 0);
        next_second += kSecond;
      }
      Wait(10'000'000);
    }
    return true;
  }

  bool TimeUp() const {
    return options_.duration_s > 0 &&
           clock_.NowNs() - start_ns_ >= static_cast<int64_t>(options_.duration_s * kSecond);
  }

  void Broadcast(TickCommand command, uint64_t tick, uint64_t frame, uint32_t timestamp = 0,
                 int64_t interval = 0, int32_t read_ahead_step = 1, uint32_t next_in_ticks = 1) {
    TickMessage m;
    m.next_in_ticks = next_in_ticks;
    m.read_ahead_step = read_ahead_step;
    m.tick = tick;
    m.frame = frame;
    m.timestamp = timestamp;
    m.interval_ns = interval;
    m.command = command;
    m.sequence = ++tick_messages_;
    m.load_generation = movies_.load_generation();
    m.movie_generation = movies_.movie_generation();
    // Spare ranks (past tiles + 1) hear only the stop.
    const int last = command == TickCommand::kStop ? comm_.size - 1 : plan_.tile_ranks();
    // The ring first (streamer/doorbell.h): a send can wait for its rank to
    // make MPI progress, which a rank asleep on its doorbell does not.
    if (doorbells_) doorbells_->Ring(m.sequence, last);
    for (int rank = 1; rank <= last; ++rank) {
      m.doorbell = doorbells_ && doorbells_->armed(rank);
      SendMessage(comm_.comm, rank, kTagTick, m);
    }
  }

  // Takes every statistics and thumbnail message waiting.
  void Drain() {
    DrainThumbnails();
    movies_.DrainReports();
    TileStats s;
    int from = 0;
    while (TryReceive(comm_.comm, MPI_ANY_SOURCE, kTagStats, &s, &from)) {
      const uint32_t t = s.tile;
      if (t >= tiles_ || plan_.rank(t) != from) continue;  // not from its rank
      s.error[sizeof s.error - 1] = '\0';
      if (s.error[0] != '\0' && latest_[t].error[0] == '\0')
        spdlog::error("tile {}: {}", TileName(c_, t), s.error);
      latest_[t] = s;
      heard_ns_[t] = clock_.NowNs();
      if (s.final) final_[t] = true;
    }
  }

  // Keeps each tile's newest thumbnail (streamer/thumbnail_board.h), if it
  // came from the tile's rank.
  void AcceptThumbnail(int rank, std::span<const std::byte> message) {
    ThumbnailHeader h;
    if (message.size() < sizeof h) return;
    std::memcpy(&h, message.data(), sizeof h);
    if (h.tile < tiles_ && plan_.rank(h.tile) == rank) thumbnails_.Accept(message);
  }
  void DrainThumbnails() {
    thumbnail_inbox_.Drain([this](int rank, auto message) { AcceptThumbnail(rank, message); });
  }

  // A tile silent for 1.5 s is dead: end the job, naming it. A tile that
  // sent its final report is stopping (it got the stop signal before rank 0
  // did): stop the others too.
  enum class Health { kAlive, kStopping, kDead };
  Health CheckAlive() {
    const int64_t now = clock_.NowNs();
    if (const int64_t stalled = StalledNs(&last_check_ns_, now))
      for (int64_t& heard : heard_ns_) heard += stalled;
    Health h = Health::kAlive;
    for (uint32_t t = 0; t < tiles_; ++t) {
      if (final_[t]) {
        h = Health::kStopping;
      } else if (now - heard_ns_[t] > kTileSilenceNs &&
                 !MessageWithin(comm_.comm, plan_.rank(t), kTagStats, kConfirmSilenceMs)) {
        spdlog::error("{} (rank {}{}) stopped responding; ending the job",
                      TilesOfRank(plan_.rank(t)), plan_.rank(t), OnServer(t));
        return Health::kDead;
      }
    }
    return h;
  }

  // ", on server stream2 (host stream2.lab)" on a wall of several servers.
  std::string OnServer(uint32_t tile) const {
    if (!c_.several_servers()) return "";
    const std::string& server = c_.servers[c_.routes[tile].server].name;
    return hosts_[tile].empty() || hosts_[tile] == server
               ? fmt::format(", on server {}", server)
               : fmt::format(", on server {} (host {})", server, hosts_[tile]);
  }

  // "tile r0c1", or "tiles r0c0, r0c1" for a rank streaming several.
  std::string TilesOfRank(int rank) const {
    std::string names;
    for (uint32_t t : plan_.tiles(rank)) names += (names.empty() ? "" : ", ") + TileName(c_, t);
    return (plan_.tiles(rank).size() > 1 ? "tiles " : "tile ") + names;
  }

  void PrintSecond() {
    server_->PingSyncNodes();
    sync_.UpdateLatency();
    std::vector<StreamSummary> streams;
    for (uint32_t t = 0; t < tiles_; ++t) {
      streams.push_back(Summarize(Delta(latest_[t], previous_[t]), c_));
      previous_[t] = latest_[t];
    }
    last_second_ = streams;
    LogRefusals();
    if (options_.shed) {
      std::vector<uint32_t> nics(tiles_);
      for (uint32_t t = 0; t < tiles_; ++t) nics[t] = latest_[t].nic;
      ShedForNics(c_, nics, nic_capacity_, &shedder_);
      ShedForOverload(streams, &shedder_);
    }
    if (!options_.quiet) {
      std::string sync;
      if (server_->synced_nodes() > 0) {
        const SyncStats& st = sync_.master().stats();
        sync = fmt::format("  sync: {} nodes, {} shown, {} skipped, skew max {:.2f} ms",
                           server_->synced_nodes(), st.presented + st.partial, st.skipped,
                           sync_.master().TakeRecentMaxSkew() / 1e6);
      }
      fmt::print("{}{}\n", SecondLine((clock_.NowNs() - start_ns_) / 1e9, streams), sync);
      std::fflush(stdout);
    }
  }

  // Each kind of refused send per tile, when it starts, once a minute while
  // it goes on, and when it stops (streamer/refusal_log.h).
  void LogRefusals() {
    refusal_lines_.clear();
    const int64_t now = clock_.NowNs();
    for (uint32_t t = 0; t < tiles_; ++t)
      refusal_log_.Look(t, TileName(c_, t), latest_[t].refusals, now, &refusal_lines_);
    for (const RefusalLog::Line& line : refusal_lines_) {
      if (line.warning)
        spdlog::warn("{}", line.text);
      else
        spdlog::info("{}", line.text);
    }
  }

  void CollectFinal() {
    const int64_t give_up = clock_.NowNs() + kFinalStatsTimeoutNs;
    for (;;) {
      Drain();
      bool all = true;
      for (bool f : final_) all = all && f;
      if (all) {
        // A tile sends its final report once its thumbnails are out.
        thumbnail_inbox_.Finish([this](int rank, auto message) { AcceptThumbnail(rank, message); });
        return;
      }
      if (clock_.NowNs() > give_up) {
        for (uint32_t t = 0; t < tiles_; ++t)
          if (!final_[t])
            spdlog::warn("tile {} (rank {}) sent no final report", TileName(c_, t), plan_.rank(t));
        return;
      }
      Sleep(1'000'000);
    }
  }

  void PrintFinal() {
    std::vector<StreamSummary> streams;
    for (uint32_t t = 0; t < tiles_; ++t) {
      streams.push_back(Summarize(latest_[t], c_));
      streams.back().host = hosts_[t];
    }
    const double seconds = (clock_.NowNs() - start_ns_) / 1e9;
    tick_timing_.latency_ns = sync_.latency_ns();
    fmt::print("{}", FinalReport(seconds, streams));
    const bool synced = !options_.bench && c_.sync.enabled;
    if (synced) fmt::print("{}\n", SyncReportLine(sync_.master()));
    if (tick_timing_.shed > 0)
      fmt::print("shed: {} ticks dropped on every tile, the tile ranks behind ({} cuts)\n",
                 tick_timing_.shed, tick_timing_.shed_cuts);
    std::fflush(stdout);
    if (!options_.json_path.empty()) {
      std::ofstream out(options_.json_path);
      out << FinalReportJson(seconds, streams, c_, options_.bench,
                             synced ? &sync_.master() : nullptr,
                             options_.bench ? nullptr : &tick_timing_);
      if (!out) spdlog::error("cannot write {}", options_.json_path);
    }
  }

  // Serves the control listener for up to ns, then sends the sync decisions
  // now due.
  void Wait(int64_t ns) {
    if (clock_priority_) clock_priority_->Sleeping(clock_.NowNs());
    server_->WaitForInput(ns);
    if (clock_priority_) clock_priority_->Woke(clock_.NowNs());
    server_->Serve();
    sync_.Decide(clock_.NowNs());
  }

  static void Sleep(int64_t ns) {
    timespec ts{static_cast<time_t>(ns / kSecond), static_cast<long>(ns % kSecond)};
    nanosleep(&ts, nullptr);
  }

  const WallComm& comm_;
  const StreamerOptions& options_;
  const Wall& wall_;
  const WallConfig& c_;
  const std::atomic<bool>* stop_;
  const uint32_t tiles_;
  mutable MonotonicClock clock_;
  std::vector<TileStats> latest_, previous_;
  std::vector<int64_t> heard_ns_;
  int64_t last_check_ns_ = 0;  // StalledNs
  std::optional<DoorbellRinger> doorbells_;
  TickTiming tick_timing_;
  TickShedder shedder_;
  // What each NIC carries (0: unknown): the config's speed, else this
  // server's kernel's (the coordinator's host; other servers' NICs need
  // speed_gbps for a ceiling).
  const std::vector<double> nic_capacity_ =
      NicCapacities(c_, static_cast<uint32_t>(std::max(0, ServerOfHost(c_, ThisHost()))),
                    [](const std::string& name) { return KernelLinkSpeedBps(name); });
  std::optional<RealTimeBudget> clock_priority_;  // playing, where permitted
  uint64_t tick_messages_ = 0;                    // Broadcast's count: each message's sequence
  std::vector<std::string> hosts_;  // per tile: where its rank runs (its ready message)
  std::vector<bool> final_;
  const RankPlan plan_;
  int64_t start_ns_ = 0;
  WallSync sync_;
  std::unique_ptr<ControlServer> server_;
  ThumbnailBoard thumbnails_{c_.wall};
  ThumbnailInbox thumbnail_inbox_{comm_.comm, kTagThumbnail, kThumbnailMessageMaxBytes};
  std::optional<Playback> playback_;                 // play mode only
  WallMovies movies_{comm_.comm, c_, plan_, wall_};  // load, the switch, the playlist
  ControlCommands commands_{[this](nlohmann::json* j) { StatusFields(j); }};
  std::vector<StreamSummary> last_second_;
  RefusalLog refusal_log_{tiles_};
  std::vector<RefusalLog::Line> refusal_lines_;
  std::unique_ptr<HttpApi> http_;  // last: its threads stop before the rest goes
};

}  // namespace

int RunCoordinator(const WallComm& comm, const StreamerOptions& options, const Wall& wall,
                   const std::atomic<bool>* stop) {
  return Coordinator(comm, options, wall, stop).Run();
}

}  // namespace tilestream
