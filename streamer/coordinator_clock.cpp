// The coordinator's frame clock and what it broadcasts to the tile ranks
// (streamer/coordinator_impl.h).
#include <time.h>

#include <random>

#include "streamer/coordinator_impl.h"

namespace tilestream {
namespace {

constexpr int64_t kHealthCheckNs = 50'000'000;  // playing, tiles' silence is checked this often

}  // namespace

bool Coordinator::RunPlay() {
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
    if (stop_->load() || commands_.stop_requested() || (options_.ticks && tick >= options_.ticks) ||
        TimeUp())
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
    Broadcast(TickCommand::kPlay, tick, movies_.FrameToSend(frame, *playback_), timestamp, interval,
              step, next_in);
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
  sync_.Finish(clock_.NowNs());
  return true;
}

void Coordinator::RaiseClock() {
  if (options_.clock_priority == 0) return;
  clock_priority_.emplace(options_.clock_priority, clock_.NowNs());
  tick_timing_.real_time = clock_priority_->real_time();
  if (!clock_priority_->status().ok()) {
    spdlog::info("the frame clock runs at normal priority ({})",
                 clock_priority_->status().message());
    clock_priority_.reset();
  }
}

void Coordinator::LowerClock() {
  if (clock_priority_) tick_timing_.windows_over_budget = clock_priority_->windows_over_budget();
  clock_priority_.reset();
}

void Coordinator::CountTick(int64_t late_ns, int64_t broadcast_ns, int64_t interval) {
  ++tick_timing_.sent;
  tick_timing_.late += late_ns > interval / 4;
  tick_timing_.max_late_ns = std::max(tick_timing_.max_late_ns, late_ns);
  tick_timing_.max_broadcast_ns = std::max(tick_timing_.max_broadcast_ns, broadcast_ns);
}

bool Coordinator::RunBench() {
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

bool Coordinator::TimeUp() const {
  return options_.duration_s > 0 &&
         clock_.NowNs() - start_ns_ >= static_cast<int64_t>(options_.duration_s * kSecond);
}

void Coordinator::Broadcast(TickCommand command, uint64_t tick, uint64_t frame, uint32_t timestamp,
                            int64_t interval, int32_t read_ahead_step, uint32_t next_in_ticks) {
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

void Coordinator::Wait(int64_t ns) {
  if (clock_priority_) clock_priority_->Sleeping(clock_.NowNs());
  server_->WaitForInput(ns);
  if (clock_priority_) clock_priority_->Woke(clock_.NowNs());
  server_->Serve();
  sync_.Decide(clock_.NowNs());
}

void Coordinator::Sleep(int64_t ns) {
  timespec ts{static_cast<time_t>(ns / kSecond), static_cast<long>(ns % kSecond)};
  nanosleep(&ts, nullptr);
}

}  // namespace tilestream
