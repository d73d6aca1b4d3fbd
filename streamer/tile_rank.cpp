#include "streamer/tile_rank.h"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <time.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "common/image/thumbnail.h"
#include "common/wall/server_hosts.h"
#include "streamer/doorbell.h"
#include "streamer/library_reporter.h"
#include "streamer/nic_failover.h"
#include "streamer/numa_placement.h"
#include "streamer/placement.h"
#include "streamer/rank_loads.h"
#include "streamer/rank_messages.h"
#include "streamer/rank_plan.h"
#include "streamer/thumbnail_board.h"
#include "streamer/tick_wait.h"
#include "streamer/tile_stream.h"

namespace tilestream {
namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kCoordinatorSilenceNs = 5 * kSecond;
// Before the go, other tiles may still be setting up (rank 0 waits 60 s).
constexpr int64_t kGoTimeoutNs = 65 * kSecond;
// Statistics are also the heartbeat: rank 0 calls a tile dead after 1.5 s of
// silence, which must come before mpirun's own 2 s abort to name the tile.
constexpr int64_t kStatsPeriodNs = kSecond / 4;
// How long a stopping rank answers NACKs for its last frame (AnswerLastNacks).
constexpr int64_t kLingerNs = kSecond / 4;
// How long a silent coordinator is looked for before it is called gone.
constexpr int kConfirmSilenceMs = 200;

int64_t ProcessCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * kSecond + ts.tv_nsec;
}

void SleepNs(int64_t ns) {
  timespec ts{0, static_cast<long>(ns)};
  nanosleep(&ts, nullptr);
}

class TileRank {
 public:
  TileRank(const WallComm& comm, const StreamerOptions& options, const Wall& wall,
           const std::atomic<bool>* stop, std::vector<uint32_t> tiles)
      : comm_(comm), options_(options), wall_(wall), stop_(stop), tiles_(std::move(tiles)) {}

  // Opens each tile's frames and socket, on the NUMA node of the first
  // tile's NIC (a rank's tiles share one where the plan allows); tells the
  // coordinator how each went.
  bool SetUp() {
    const WallConfig& c = wall_.config;
    const int numa = PlaceOnNumaNode(c.nics[c.routes[tiles_.front()].nic].numa_node);
    const std::string host = ThisHost();
    OpenDoorbell();
    bool ok = true;
    for (uint32_t tile : tiles_) {
      ReadyMessage ready;
      ready.numa_node = static_cast<uint32_t>(numa);
      if (doorbell_) {
        ready.doorbell_address = doorbell_->address().s_addr;
        ready.doorbell_port = doorbell_->port();
      }
      std::strncpy(ready.host, host.c_str(), sizeof ready.host - 1);
      const double phase = static_cast<double>(tile) / static_cast<double>(c.routes.size());
      auto stream = TileStream::Open(wall_, options_, tile, phase, &clock_, &ready);
      SendMessage(comm_.comm, 0, kTagReady, ready);
      ok = ok && stream != nullptr;
      if (stream) streams_.push_back(std::move(stream));
    }
    for (const auto& s : streams_) {
      if (s->feedback_fd() < 0) continue;
      waits_.push_back({s->feedback_fd(), POLLIN, 0});
      feedback_streams_.push_back(s.get());
    }
    if (doorbell_)
      waits_.push_back({doorbell_->fd(), POLLIN, 0});  // last: only NextTick waits on it
    outbox_.resize(streams_.size());
    if (wall_.config.http.thumbnail_period_ms > 0) {
      thumbnails_.resize(streams_.size());
      for (ThumbnailOutbox& t : thumbnails_) t.message.resize(kThumbnailMessageMaxBytes);
    }
    bench_.resize(streams_.size());
    loads_.emplace(comm_.comm, &streams_);
    if (!options_.bench) library_ = LibraryReporter::For(c, tiles_);
    failover_.emplace(c, c.nics[c.routes[tiles_.front()].nic].server);
    return ok;
  }

  // Returns false if the coordinator went silent.
  bool Run() {
    start_ns_ = clock_.NowNs();
    last_message_ns_ = start_ns_;
    last_stats_ns_ = start_ns_;
    // The coordinator's go: the first tick, or a heartbeat in bench mode.
    TickMessage tick;
    if (NextTick(&tick)) {
      silence_limit_ns_ = kCoordinatorSilenceNs;
      start_ns_ = clock_.NowNs();
      start_cpu_ns_ = ProcessCpuNs();
      if (options_.bench) {
        for (size_t i = 0; i < streams_.size(); ++i) QueueBenchFrame(i, start_ns_);
        Pump();
      } else {
        do {
          if (tick.command == TickCommand::kPlay) {
            loads_->Take(tick);
            Play(tick);
          } else if (tick.command == TickCommand::kEnd) {
            SayBye();
          }
          MaybeSendStats(clock_.NowNs());
        } while (NextTick(&tick));
        if (!coordinator_gone_) AnswerLastNacks();
      }
    }
    if (coordinator_gone_) return false;
    if (library_) library_->Finish();
    SendStats(true);
    return true;
  }

 private:
  // Every tile sends the tick's frame, paced from when the tick was due
  // until the next tick sent (one interval, more while ticks are shed): a
  // tick that came late has its frames squeezed into what is left of that
  // (common/send/pacer.h). A frame not read by half the interval is missed
  // (the tick goes by).
  void Play(const TickMessage& tick) {
    const int64_t due = ticks_.tick_due_ns();
    for (auto& s : streams_) {
      s->SetReadAhead(tick.read_ahead_step);
      s->SetPlayClock(tick.frame, due, tick.interval_ns);
      s->Queue(tick.frame, tick.timestamp, due, ticks_.next_tick_due_ns() - due,
               due + tick.interval_ns / 2);
    }
    Pump();
  }

  // The pacing loop: sends each burst of the rank's tiles at its slot and
  // sleeps in between (or, while a tile waits for a frame from the disk,
  // waits on that tile's read-ahead ring). Playing, it returns once every
  // tile's frame is out; the next tick being due (by the clock: no MPI call,
  // and none of Open MPI's sched_yield, in here) sends the rest at once. In
  // benchmark mode each tile's next frame is queued as the last goes out,
  // and once told to stop it returns when the frames under way are out.
  void Pump() {
    const int64_t spin_ns = streams_.front()->sender().pacer().spin_ns();
    bool benching = options_.bench;
    for (;;) {
      int64_t now = clock_.NowNs();
      const bool hurry = !options_.bench && now >= ticks_.next_tick_due_ns();
      TileStream *next_stream = nullptr, *waiter = nullptr;
      int64_t next = TileStream::kNever;
      for (size_t i = 0; i < streams_.size(); ++i) {
        TileStream& s = *streams_[i];
        if (s.DueNs(now, hurry) <= now) s.Step(now, now, hurry);
        if (benching && !s.busy()) QueueBenchFrame(i, now);
        if (!s.busy()) continue;
        if (s.waiting_for_frame() && !waiter) {
          waiter = &s;
        } else if (const int64_t due = s.DueNs(now, hurry); due < next) {
          next = due;
          next_stream = &s;
        }
      }
      if (!waiter && !next_stream) return;  // every frame is out
      now = clock_.NowNs();
      if (benching && now >= last_stats_ns_ + kStatsPeriodNs) benching = KeepBenching(now);
      if (coordinator_gone_) return;
      MaybeSendStats(now);
      const int64_t until = std::min(next, last_stats_ns_ + kStatsPeriodNs);
      if (waiter) {
        waiter->Step(now, until, hurry);
      } else if (until > now && WaitAnswering(until, spin_ns) && until == next) {
        next_stream->CountSleep();
      }
    }
  }

  // The stream's end, once: said when the coordinator says the last frames
  // are out (kEnd), or at the stop.
  void SayBye() {
    if (said_bye_) return;
    said_bye_ = true;
    for (TileStream* s : feedback_streams_) s->EndStream();
  }

  // Stopping: the last frame's losses are asked for after it went out (a
  // lost tail once the receiver has the BYE that ends its stream), so NACKs
  // are answered kLingerNs more before the final report: the show's last
  // frame arrives whole too.
  void AnswerLastNacks() {
    if (feedback_streams_.empty()) return;
    SayBye();
    const int64_t until = clock_.NowNs() + kLingerNs;
    while (clock_.NowNs() < until && !WaitAnswering(until, 0)) {
    }
  }

  // Waits until `until` like WaitUntilNs, but a receiver's NACK arriving
  // on a tile's socket ends the sleep and is answered at once (no extra
  // wake-up while nothing is lost: the same one sleep), and so does the
  // doorbell when `doorbell` (waiting for a tick). Returns whether it slept
  // all the way. While a tile waits on its ring (Pump), NACKs wait.
  bool WaitAnswering(int64_t until, int64_t spin_ns, bool doorbell = false) {
    const size_t n = feedback_streams_.size() + (doorbell && doorbell_ ? 1 : 0);
    if (n == 0) return WaitUntilNs(&clock_, until, spin_ns);
    const int64_t sleep_ns = until - spin_ns - clock_.NowNs();
    if (sleep_ns <= 0) return WaitUntilNs(&clock_, until, spin_ns);
    timespec ts{static_cast<time_t>(sleep_ns / kSecond), static_cast<long>(sleep_ns % kSecond)};
    if (ppoll(waits_.data(), n, &ts, nullptr) > 0) {
      for (size_t i = 0; i < feedback_streams_.size(); ++i)
        if (waits_[i].revents) feedback_streams_[i]->AnswerFeedback();
      if (n > feedback_streams_.size() && waits_.back().revents)
        ticks_.Rang(doorbell_->Drain(), clock_.NowNs());
      return false;
    }
    WaitUntilNs(&clock_, until, spin_ns);  // the last spin_ns
    return true;
  }

  // A doorbell on this rank's side of MPI (streamer/doorbell.h); without
  // one (no address for it, or no socket) the rank polls.
  void OpenDoorbell() {
    const std::optional<in_addr> address = DoorbellAddress(wall_.config, tiles_.front());
    if (!address) return;
    if (auto d = DoorbellListener::Open(*address); d.ok()) {
      doorbell_.emplace(std::move(d).value());
      ticks_ = TickWait(true);
    } else {
      spdlog::warn("rank {}: {}; polling for ticks instead", comm_.rank, d.status().message());
    }
  }

  // Benchmark: frames back to back (unpaced) or at --rate / the wall's fps,
  // each tile on its own schedule; a tile that fell behind does not burst
  // to catch up. It waits up to 5 s for a frame from the disk: that wait is
  // the disk's rate.
  struct BenchSchedule {
    uint64_t frame = 0;
    int64_t start_ns = -1;
  };
  void QueueBenchFrame(size_t i, int64_t now) {
    const WallConfig& c = wall_.config;
    BenchSchedule& b = bench_[i];
    const uint64_t frame = b.frame % (wall_.movie ? wall_.movie->frames : 2);
    const uint32_t timestamp = RtpTimestampForTick(b.frame++, c.wall.fps, 0);
    if (!c.stream.pacing) {
      streams_[i]->Queue(frame, timestamp, now, 1, now + 5 * kSecond);
      return;
    }
    const int64_t interval = BenchIntervalNs(*streams_[i]);
    if (b.start_ns < 0 || now > b.start_ns + interval) b.start_ns = now;
    streams_[i]->Queue(frame, timestamp, b.start_ns, interval, now + 5 * kSecond);
    b.start_ns += interval;
  }

  int64_t BenchIntervalNs(const TileStream& s) const {
    if (options_.rate_gbps <= 0) return static_cast<int64_t>(kSecond / wall_.config.wall.fps);
    const double bits = s.sender().packetizer().frame_payload_bytes() * 8.0;  // UDP payload
    return static_cast<int64_t>(bits / (options_.rate_gbps * 1e9) * kSecond);
  }

  // The coordinator only says when to stop (and beats its heart).
  bool KeepBenching(int64_t now) {
    TickMessage m;
    while (TryReceive(comm_.comm, 0, kTagTick, &m)) {
      last_message_ns_ = now;
      if (m.command == TickCommand::kStop) return false;
    }
    if (stop_->load()) return false;
    last_message_ns_ += StalledNs(&last_look_ns_, now);
    coordinator_gone_ = now - last_message_ns_ > kCoordinatorSilenceNs &&
                        !MessageWithin(comm_.comm, 0, kTagTick, kConfirmSilenceMs);
    return !coordinator_gone_;
  }

  // Waits for the next message from the coordinator; false to stop.
  bool NextTick(TickMessage* tick) {
    const int64_t waiting_since = clock_.NowNs();
    while (!MessageWaiting(comm_.comm, 0, kTagTick)) {
      if (stop_->load()) return false;
      const int64_t now = clock_.NowNs();
      last_message_ns_ += StalledNs(&last_look_ns_, now);
      if (now - last_message_ns_ > silence_limit_ns_) {
        if (MessageWithin(comm_.comm, 0, kTagTick, kConfirmSilenceMs)) continue;
        coordinator_gone_ = true;
        return false;
      }
      MaybeSendStats(now);
      MaybeSendThumbnails(now);
      const int64_t until = now + ticks_.WaitNs(now, last_stats_ns_ + kStatsPeriodNs);
      if (WaitAnswering(until, 0, ticks_.doorbell())) ticks_.Slept(clock_.NowNs());
    }
    // Take the newest tick; older ones waiting mean this rank fell behind.
    uint64_t plays = 0;
    while (TryReceive(comm_.comm, 0, kTagTick, tick)) {
      if (tick->command == TickCommand::kStop) return false;
      plays += tick->command == TickCommand::kPlay;
    }
    if (plays > 1)
      for (auto& s : streams_) s->CountSkippedTicks(plays - 1);
    last_message_ns_ = clock_.NowNs();
    if (ticks_.Took(*tick, last_message_ns_))
      spdlog::warn(
          "rank {}: {} ticks came but no doorbell ring (a firewall on UDP?); polling for "
          "ticks instead",
          comm_.rank, TickWait::kUnrungTicks);
    if (tick->command == TickCommand::kPlay) {
      const uint64_t late = TickWait::SeenLate(waiting_since, last_message_ns_,
                                               ticks_.tick_due_ns(), tick->interval_ns, plays);
      if (late > 0)
        for (auto& s : streams_) s->CountTicksSeenLate(late);
    }
    return true;
  }
  void MaybeSendStats(int64_t now) {
    if (failover_->Look(now, streams_)) {  // a tile moved to another NIC: its socket is new
      for (size_t i = 0; i < feedback_streams_.size(); ++i)
        waits_[i].fd = feedback_streams_[i]->feedback_fd();
    }
    loads_->Report();
    bool error = false;
    for (const auto& s : streams_) error = error || s->error_pending();
    if (now - last_stats_ns_ < kStatsPeriodNs && !error) return;
    last_stats_ns_ = now;
    if (library_) library_->MaybeSend(comm_.comm);
    SendStats(false);
  }

  // A message per tile; a period's messages are skipped while the last
  // period's are still on their way, except the final ones.
  void SendStats(bool final) {
    if (final)  // the coordinator takes thumbnails until every final report is in
      for (ThumbnailOutbox& o : thumbnails_) MPI_Wait(&o.request, MPI_STATUS_IGNORE);
    for (Outbox& o : outbox_) {
      if (o.request == MPI_REQUEST_NULL) continue;
      int done = 0;
      MPI_Test(&o.request, &done, MPI_STATUS_IGNORE);
      if (!done && !final) return;
      if (!done) MPI_Wait(&o.request, MPI_STATUS_IGNORE);
    }
    const int64_t cpu_share =
        (ProcessCpuNs() - start_cpu_ns_) / static_cast<int64_t>(streams_.size());
    const int64_t elapsed = clock_.NowNs() - start_ns_;
    for (size_t i = 0; i < streams_.size(); ++i) {
      Outbox& o = outbox_[i];
      o.message = streams_[i]->Collect(cpu_share, elapsed);
      o.message.final = final;
      if (final) {
        SendMessage(comm_.comm, 0, kTagStats, o.message);
      } else {  // the one message sent without waiting: its buffer stays in the outbox
        MPI_Isend(&o.message, sizeof o.message, MPI_BYTE, 0, kTagStats, comm_.comm, &o.request);
      }
    }
  }

  struct Outbox {
    TileStats message;
    MPI_Request request = MPI_REQUEST_NULL;
  };

  // Every http.thumbnail_period_ms (1 s), between frames (never while one
  // is being sent), a thumbnail of each tile's last frame for the
  // coordinator's live picture, into the buffer SetUp made; skipped while
  // the tile's last one is still on its way.
  void MaybeSendThumbnails(int64_t now) {
    const int64_t period = int64_t{wall_.config.http.thumbnail_period_ms} * 1'000'000;
    if (period == 0 || now - last_thumbnail_ns_ < period) return;
    last_thumbnail_ns_ = now;
    const TileGeometry tile = wall_.config.wall.tile;
    const ThumbnailSize size = ThumbnailOf(tile.width, tile.height);
    for (size_t i = 0; i < thumbnails_.size(); ++i) {
      ThumbnailOutbox& o = thumbnails_[i];
      int done = 1;
      if (o.request != MPI_REQUEST_NULL) MPI_Test(&o.request, &done, MPI_STATUS_IGNORE);
      const std::byte* frame = streams_[i]->last_frame();
      if (!done || !frame) continue;
      const ThumbnailHeader h{streams_[i]->tile(), size.width, size.height, 0,
                              streams_[i]->last_frame_index()};
      std::memcpy(o.message.data(), &h, sizeof h);
      MakeThumbnail(frame, tile.width, tile.height, size, o.message.data() + sizeof h);
      MPI_Isend(o.message.data(), static_cast<int>(sizeof h + size.bytes()), MPI_BYTE, 0,
                kTagThumbnail, comm_.comm, &o.request);
    }
  }

  struct ThumbnailOutbox {
    std::vector<std::byte> message;
    MPI_Request request = MPI_REQUEST_NULL;
  };

  const WallComm& comm_;
  const StreamerOptions& options_;
  const Wall& wall_;
  const std::atomic<bool>* stop_;
  const std::vector<uint32_t> tiles_;  // this rank's (streamer/rank_plan.h)
  MonotonicClock clock_;
  std::vector<std::unique_ptr<TileStream>> streams_;
  std::vector<Outbox> outbox_;
  std::vector<ThumbnailOutbox> thumbnails_;
  int64_t last_thumbnail_ns_ = 0;
  std::vector<BenchSchedule> bench_;
  // The sockets of tiles that answer NACKs, then the doorbell's.
  std::vector<pollfd> waits_;
  std::vector<TileStream*> feedback_streams_;  // the streams of the NACK sockets
  std::optional<NicFailover> failover_;
  std::optional<RankLoads> loads_;            // `load`: pre-roll and switch
  std::unique_ptr<LibraryReporter> library_;  // its server's movies, if this rank says them
  std::optional<DoorbellListener> doorbell_;
  TickWait ticks_{false};  // the wait for the next tick (streamer/tick_wait.h)
  int64_t silence_limit_ns_ = kGoTimeoutNs;
  bool coordinator_gone_ = false;
  bool said_bye_ = false;  // SayBye
  int64_t start_ns_ = 0, start_cpu_ns_ = 0, last_message_ns_ = 0, last_stats_ns_ = 0;
  int64_t last_look_ns_ = 0;  // StalledNs
};

// A rank past tiles + 1 has nothing to stream: it waits for the end (a dead
// coordinator ends a static job through mpirun).
int WaitAsSpare(const WallComm& comm, const std::atomic<bool>* stop) {
  while (!stop->load()) {
    TickMessage m;
    if (TryReceive(comm.comm, 0, kTagTick, &m) && m.command == TickCommand::kStop) break;
    SleepNs(100'000'000);
  }
  return 0;
}

}  // namespace

int RunTileRank(const WallComm& comm, const StreamerOptions& options, const Wall& wall,
                const std::atomic<bool>* stop) {
  const RankPlan plan(wall.config, static_cast<uint32_t>(comm.size - 1));
  if (plan.tiles(comm.rank).empty()) return WaitAsSpare(comm, stop);
  if (const Status s = CheckPlacement(wall.config, plan, comm.rank, ThisHost()); !s.ok()) {
    // Said here too: mpirun may end the job before the coordinator says it.
    spdlog::error("rank {}: {}", comm.rank, s.message());
    ReportSetUpFailure(comm, s.message());
    return 1;
  }
  TileRank rank(comm, options, wall, stop, plan.tiles(comm.rank));
  if (!rank.SetUp()) return 1;
  return rank.Run() ? 0 : kExitPeerGone;
}

void ReportSetUpFailure(const WallComm& comm, const std::string& error) {
  ReadyMessage ready;  // for all of this rank's tiles
  std::strncpy(ready.message, error.c_str(), sizeof ready.message - 1);
  std::strncpy(ready.host, ThisHost().c_str(), sizeof ready.host - 1);
  SendMessage(comm.comm, 0, kTagReady, ready);
}

}  // namespace tilestream
