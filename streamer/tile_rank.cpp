#include "streamer/tile_rank.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>

#include "common/frame_ring.h"
#include "common/tile_sender.h"
#include "streamer/numa_placement.h"

namespace tilestream {
namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kCoordinatorSilenceNs = 5 * kSecond;
// Before the go, other tiles may still be setting up (rank 0 waits 60 s).
constexpr int64_t kGoTimeoutNs = 65 * kSecond;
// Statistics are also the heartbeat: rank 0 calls a tile dead after 1.5 s of
// silence, which must come before mpirun's own 2 s abort to name the tile.
constexpr int64_t kStatsPeriodNs = kSecond / 4;

void CopyText(const std::string& s, char* out, size_t size) {
  std::strncpy(out, s.c_str(), size - 1);
  out[size - 1] = '\0';
}

int64_t ProcessCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * kSecond + ts.tv_nsec;
}

void SleepNs(int64_t ns) {
  timespec ts{0, static_cast<long>(ns)};
  nanosleep(&ts, nullptr);
}

// Frames for benchmarks from memory: up to 4 frames of the movie, or a
// synthetic pattern that differs per tile and frame.
std::unique_ptr<FrameProvider> MemorySource(const Wall& wall, uint32_t tile, std::string* error) {
  std::vector<std::vector<std::byte>> frames;
  const TileGeometry g = wall.config.wall.tile;
  if (wall.movie) {
    auto reader = TileReader::Open(*wall.movie, tile);
    auto buffer = AlignedBuffer::Allocate(wall.movie->frame_stride);
    if (!reader.ok() || !buffer.ok()) {
      *error = reader.ok() ? buffer.status().message() : reader.status().message();
      return nullptr;
    }
    for (uint64_t f = 0; f < std::min<uint64_t>(4, wall.movie->frames); ++f) {
      if (Status s = reader->ReadFrame(f, buffer->span()); !s.ok()) {
        *error = s.message();
        return nullptr;
      }
      frames.emplace_back(buffer->data(), buffer->data() + g.frame_bytes());
    }
  } else {
    for (uint32_t f = 0; f < 2; ++f) {
      std::vector<std::byte> frame(g.frame_bytes());
      for (size_t i = 0; i < frame.size(); ++i)
        frame[i] = std::byte((i / 3 + tile * 37 + f * 101) & 0xff);
      frames.push_back(std::move(frame));
    }
  }
  return std::make_unique<MemoryFrames>(std::move(frames));
}

class TileRank {
 public:
  TileRank(const WallComm& comm, const StreamerOptions& options, const Wall& wall,
           const std::atomic<bool>* stop)
      : comm_(comm),
        options_(options),
        wall_(wall),
        stop_(stop),
        tile_(static_cast<uint32_t>(comm.rank - 1)) {
    stats_.tile = tile_;
  }

  // Opens the frames and the socket; tells the coordinator how it went.
  bool SetUp() {
    const WallConfig& c = wall_.config;
    const TileRoute& route = c.routes[tile_];
    const Nic& nic = c.nics[route.nic];
    const DisplayNode& node = c.nodes[route.node];
    ReadyMessage ready;
    ready.numa_node = static_cast<uint32_t>(PlaceOnNumaNode(nic.numa_node));
    std::string error;
    if (options_.source == "memory") {
      frames_ = MemorySource(wall_, tile_, &error);
    } else {
      auto ring = DiskFrameRing::Open(*wall_.movie, tile_, options_.ring_frames);
      if (ring.ok()) {
        ready.direct_io = (*ring)->direct();
        frames_ = std::move(ring).value();
      } else {
        error = ring.status().message();
      }
    }
    if (frames_) {
      TileSenderOptions so;
      so.packetizer.tile = c.wall.tile;
      so.packetizer.max_payload = c.max_udp_payload();
      so.packetizer.packing = c.stream.packing;
      so.packetizer.payload_type = c.stream.payload_type;
      so.packetizer.ssrc = TileSsrc(tile_);
      so.socket.destination = node.address;
      so.socket.port = route.port;
      so.socket.source_address = nic.address;
      if (nic.name != "default") so.socket.device = nic.name;
      so.socket.send_buffer = c.stream.send_buffer;
      so.pacing = c.stream.pacing;
      so.pacing_quantum_ns = int64_t{c.stream.pacing_quantum_us} * 1000;
      so.max_burst_bytes = c.stream.max_burst_bytes;
      so.pacing_phase = static_cast<double>(tile_) / static_cast<double>(c.routes.size());
      auto sender = TileSender::Create(so, &clock_);
      if (sender.ok()) {
        sender_ = std::move(sender).value();
        ready.gso = sender_->socket().gso();
      } else {
        error = fmt::format("socket to {}:{} via NIC {}: {}", node.address, route.port, nic.name,
                            sender.status().message());
      }
    }
    ready.ok = error.empty();
    CopyText(error, ready.message, sizeof ready.message);
    MPI_Send(&ready, sizeof ready, MPI_BYTE, 0, kTagReady, comm_.comm);
    return ready.ok;
  }

  // Returns false if the coordinator went silent.
  bool Run() {
    start_ns_ = clock_.NowNs();
    last_message_ns_ = start_ns_;
    last_stats_ns_ = start_ns_;
    // The next tick is due: the rest of the frame goes at once. By the
    // clock, not by asking MPI: no MPI call (and none of Open MPI's
    // sched_yield) in the send loop.
    hurry_ = [this] { return clock_.NowNs() >= next_tick_due_ns_; };
    // The coordinator's go: the first tick, or a heartbeat in bench mode.
    TickMessage tick;
    if (NextTick(&tick)) {
      silence_limit_ns_ = kCoordinatorSilenceNs;
      start_ns_ = clock_.NowNs();
      start_cpu_ns_ = ProcessCpuNs();
      if (options_.bench) {
        RunBench();
      } else {
        do {
          if (tick.command != TickCommand::kPlay) continue;
          frames_->SetReadAhead(tick.read_ahead_step);
          // Paced from when the tick was due: a tick that came late has its
          // frame squeezed into what is left of the interval (common/pacer.h).
          SendOne(tick.frame, tick.timestamp, tick_due_ns_, tick.interval_ns, &hurry_);
          MaybeSendStats(clock_.NowNs());
        } while (NextTick(&tick));
      }
    }
    if (coordinator_gone_) return false;
    SendStats(true);
    return true;
  }

 private:
  // Waits for the next message from the coordinator; false to stop.
  bool NextTick(TickMessage* tick) {
    for (;;) {
      int pending = 0;
      MPI_Iprobe(0, kTagTick, comm_.comm, &pending, MPI_STATUS_IGNORE);
      if (pending) break;
      if (stop_->load()) return false;
      const int64_t now = clock_.NowNs();
      if (now - last_message_ns_ > silence_limit_ns_) {
        coordinator_gone_ = true;
        return false;
      }
      MaybeSendStats(now);
      SleepNs(TickWaitNs(now));
    }
    // Take the newest tick; older ones waiting mean this tile fell behind.
    uint64_t plays = 0;
    for (int pending = 1; pending;) {
      MPI_Recv(tick, sizeof *tick, MPI_BYTE, 0, kTagTick, comm_.comm, MPI_STATUS_IGNORE);
      if (tick->command == TickCommand::kStop) return false;
      plays += tick->command == TickCommand::kPlay;
      MPI_Iprobe(0, kTagTick, comm_.comm, &pending, MPI_STATUS_IGNORE);
    }
    if (plays > 1) stats_.skipped_ticks += plays - 1;
    last_message_ns_ = clock_.NowNs();
    ExpectNextTick(*tick);
    return true;
  }

  // When the coordinator's next tick is due. Its ticks keep a schedule
  // (tick k at start + k * interval) but may each come late; the earliest
  // arrival relative to it is the best estimate of the schedule, so a tick
  // that came late does not push the next one's expected time back (the
  // next one comes on time, right after it).
  void ExpectNextTick(const TickMessage& tick) {
    if (tick.command != TickCommand::kPlay || tick.interval_ns <= 0) {
      tick_due_ns_ = last_message_ns_;
      next_tick_due_ns_ = last_message_ns_ + tick.interval_ns;
      return;
    }
    const int64_t offset = static_cast<int64_t>(tick.tick) * tick.interval_ns;
    if (!have_schedule_ || last_message_ns_ - offset < schedule_start_ns_)
      schedule_start_ns_ = last_message_ns_ - offset;
    have_schedule_ = true;
    tick_due_ns_ = schedule_start_ns_ + offset;
    next_tick_due_ns_ = tick_due_ns_ + tick.interval_ns;
  }

  // How long to sleep before asking for the next tick again: until it is
  // due in one sleep (the coordinator sends on time, so it comes within
  // tens of microseconds), then briefly, backing off to 2 ms while none
  // comes (paused, or before the go); never past the next heartbeat. Polling
  // every 100-500 us took about 100 wake-ups a tick.
  int64_t TickWaitNs(int64_t now) const {
    constexpr int64_t kPollNs = 50'000, kMaxPollNs = 2'000'000;
    const int64_t until_due = next_tick_due_ns_ - now;
    const int64_t wait =
        until_due > 0 ? until_due : std::clamp(-until_due / 2, kPollNs, kMaxPollNs);
    return std::clamp<int64_t>(std::min(wait, last_stats_ns_ + kStatsPeriodNs - now), kPollNs,
                               kStatsPeriodNs);
  }

  // Frames back to back (unpaced) or at --rate / the wall's fps, each tile
  // on its own; the coordinator only says when to stop.
  void RunBench() {
    const WallConfig& c = wall_.config;
    const uint64_t frames = wall_.movie ? wall_.movie->frames : 2;
    int64_t interval = static_cast<int64_t>(kSecond / c.wall.fps);
    if (options_.rate_gbps > 0) {  // UDP payload bits per second
      const double bits = sender_->packetizer().frame_payload_bytes() * 8.0;
      interval = static_cast<int64_t>(bits / (options_.rate_gbps * 1e9) * kSecond);
    }
    int64_t start = clock_.NowNs();
    for (uint64_t f = 0;; ++f) {
      int pending = 0;
      MPI_Iprobe(0, kTagTick, comm_.comm, &pending, MPI_STATUS_IGNORE);
      if (pending) {
        TickMessage m;
        MPI_Recv(&m, sizeof m, MPI_BYTE, 0, kTagTick, comm_.comm, MPI_STATUS_IGNORE);
        last_message_ns_ = clock_.NowNs();
        if (m.command == TickCommand::kStop) return;
      }
      const int64_t now = clock_.NowNs();
      if (stop_->load()) return;
      if (now - last_message_ns_ > kCoordinatorSilenceNs) {
        coordinator_gone_ = true;
        return;
      }
      if (c.stream.pacing) {
        if (now > start + interval) start = now;  // fell behind: do not burst to catch up
        SendOne(f % frames, RtpTimestampForTick(f, c.wall.fps, 0), start, interval, nullptr);
        start += interval;
      } else {
        SendOne(f % frames, RtpTimestampForTick(f, c.wall.fps, 0), now, 1, nullptr);
      }
      MaybeSendStats(clock_.NowNs());
    }
  }

  // Playing, a frame not read by half the interval is missed (the tick goes
  // by); in benchmark mode the tile waits for it: that wait is the disk rate.
  void SendOne(uint64_t frame_index, uint32_t timestamp, int64_t start, int64_t interval,
               const std::function<bool()>* hurry) {
    const std::byte* frame = nullptr;
    if (options_.bench) {  // wait, in slices that keep the heartbeat going
      for (int64_t waited = 0; !frame && waited < 5 * kSecond && !stop_->load();
           waited += kStatsPeriodNs) {
        frame = frames_->Acquire(frame_index, clock_.NowNs() + kStatsPeriodNs);
        if (!frame && frames_->failed()) break;
        MaybeSendStats(clock_.NowNs());
      }
    } else {
      frame = frames_->Acquire(frame_index, start + interval / 2);
    }
    bool acquired = frame != nullptr;
    if (!frame && frames_->failed()) {
      Report(fmt::format("reading the tile store: {}; holding the last frame", frames_->error()));
      frame = frames_->LastFrame();
      if (frame) ++stats_.held_frames;
    }
    if (!frame) {
      ++stats_.missed_frames;
      return;
    }
    const int e = sender_->SendFrame(frame, timestamp, start, interval, hurry ? *hurry : nullptr);
    if (acquired) frames_->Release();
    if (e != 0) Report(fmt::format("send: {}", std::strerror(e)));
  }

  // The first run-time error, once, to the coordinator (which prints it).
  void Report(const std::string& error) {
    if (stats_.error[0] != '\0') return;
    CopyText(error, stats_.error, sizeof stats_.error);
    error_pending_ = true;
  }

  void Collect() {
    const tilestream::SendStats& s = sender_->socket().stats();
    const TileSenderStats& t = sender_->stats();
    const FrameSourceStats d = frames_->stats();
    stats_.frames = t.frames;
    stats_.late_frames = t.late_frames;
    stats_.packets = s.datagrams;
    stats_.bytes = s.bytes;
    stats_.syscalls = s.syscalls;
    stats_.send_errors = s.dropped;
    stats_.refused = s.refused;
    stats_.disk_bytes = d.bytes_read;
    stats_.disk_read_ns = d.read_ns;
    stats_.pacer_squeezes = sender_->pacer().stats().squeezes;
    stats_.pacer_sleeps = sender_->pacer().stats().sleeps;
    stats_.cpu_ns = ProcessCpuNs() - start_cpu_ns_;
    stats_.elapsed_ns = clock_.NowNs() - start_ns_;
  }

  void MaybeSendStats(int64_t now) {
    if (now - last_stats_ns_ < kStatsPeriodNs && !error_pending_) return;
    last_stats_ns_ = now;
    SendStats(false);
  }

  void SendStats(bool final) {
    if (request_ != MPI_REQUEST_NULL) {
      int done = 0;
      MPI_Test(&request_, &done, MPI_STATUS_IGNORE);
      if (!done && !final) return;
      if (!done) MPI_Wait(&request_, MPI_STATUS_IGNORE);
    }
    Collect();
    stats_.final = final;
    outgoing_ = stats_;
    error_pending_ = false;
    if (final) {
      MPI_Send(&outgoing_, sizeof outgoing_, MPI_BYTE, 0, kTagStats, comm_.comm);
    } else {
      MPI_Isend(&outgoing_, sizeof outgoing_, MPI_BYTE, 0, kTagStats, comm_.comm, &request_);
    }
  }

  const WallComm& comm_;
  const StreamerOptions& options_;
  const Wall& wall_;
  const std::atomic<bool>* stop_;
  const uint32_t tile_;
  MonotonicClock clock_;
  std::unique_ptr<FrameProvider> frames_;
  std::unique_ptr<TileSender> sender_;
  std::function<bool()> hurry_;
  TileStats stats_, outgoing_;
  MPI_Request request_ = MPI_REQUEST_NULL;
  bool error_pending_ = false;
  int64_t silence_limit_ns_ = kGoTimeoutNs;
  bool coordinator_gone_ = false;
  int64_t start_ns_ = 0, start_cpu_ns_ = 0, last_message_ns_ = 0, last_stats_ns_ = 0;
  int64_t tick_due_ns_ = 0;       // when the tick being sent was due
  int64_t next_tick_due_ns_ = 0;  // when the coordinator's next tick should come
  bool have_schedule_ = false;
  int64_t schedule_start_ns_ = 0;  // the coordinator's tick 0, as seen here (ExpectNextTick)
};

}  // namespace

int RunTileRank(const WallComm& comm, const StreamerOptions& options, const Wall& wall,
                const std::atomic<bool>* stop) {
  TileRank rank(comm, options, wall, stop);
  if (!rank.SetUp()) return 1;
  return rank.Run() ? 0 : kExitPeerGone;
}

void ReportSetUpFailure(const WallComm& comm, const std::string& error) {
  ReadyMessage ready;
  CopyText(error, ready.message, sizeof ready.message);
  MPI_Send(&ready, sizeof ready, MPI_BYTE, 0, kTagReady, comm.comm);
}

}  // namespace tilestream
