#include "streamer/tile_stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>
#include <vector>

#include "common/image/slate.h"
#include "common/send/wall_sender_options.h"

namespace tilestream {
namespace {

// A frame not in yet is looked for again this often while other tiles of
// the rank keep it busy (alone, the rank waits on the ring itself).
constexpr int64_t kLookAgainNs = 1'000'000;

void CopyText(const std::string& s, char* out, size_t size) {
  std::strncpy(out, s.c_str(), size - 1);
  out[size - 1] = '\0';
}

// Frames for benchmarks from memory: up to 4 frames of the movie, or a
// synthetic pattern that differs per tile and frame.
std::unique_ptr<FrameProvider> MemorySource(const WallConfig& c, const MovieManifest* movie,
                                            uint32_t tile, std::string* error) {
  std::vector<std::vector<std::byte>> frames;
  const TileGeometry g = c.wall.tile;
  if (movie) {
    auto reader = TileReader::Open(*movie, tile);
    auto buffer = AlignedBuffer::Allocate(movie->frame_stride);
    if (!reader.ok() || !buffer.ok()) {
      *error = reader.ok() ? buffer.status().message() : reader.status().message();
      return nullptr;
    }
    for (uint64_t f = 0; f < std::min<uint64_t>(4, movie->frames); ++f) {
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
        frame[i] = std::byte((i / 3 + size_t{tile} * 37 + size_t{f} * 101) & 0xff);
      frames.push_back(std::move(frame));
    }
  }
  return std::make_unique<MemoryFrames>(std::move(frames));
}

// What an idle wall shows: the slate's part of this tile, or black.
std::unique_ptr<FrameProvider> IdleFrames(const WallConfig& c, uint32_t tile, std::string* error) {
  std::vector<std::byte> frame(c.wall.tile.frame_bytes());
  if (!c.slate_path.empty()) {
    auto picture = ReadSlate(c.slate_path);
    if (!picture.ok()) {
      *error = picture.status().message();
      return nullptr;
    }
    frame = SlateTile(*picture, c.wall, tile);
  }
  return std::make_unique<MemoryFrames>(std::vector<std::vector<std::byte>>{std::move(frame)});
}

// The frames a disk ring holds after sending them, for the sender's history
// (HistoryFrames; the one being sent is the ring's too).
uint32_t RingKeep(const WallConfig& c) { return c.sync.timed() ? HistoryFrames(c) - 1 : 1; }

}  // namespace

std::unique_ptr<TileStream> TileStream::Open(const Wall& wall, const StreamerOptions& options,
                                             uint32_t tile, double phase, Clock* clock,
                                             ReadyMessage* ready) {
  const WallConfig& c = wall.config;
  std::unique_ptr<TileStream> s(new TileStream(tile, c));
  ready->tile = tile;
  s->source_ = options.source;
  s->ring_slots_ = options.ring_frames + RingKeep(c) - 1;  // the read-ahead, and the held
  std::string error;
  if (!wall.movie && (!c.library_path.empty() || !c.live.empty())) {  // the slate until a `load`
    s->frames_ = IdleFrames(c, tile, &error);
  } else if (options.source == "memory") {
    s->frames_ = MemorySource(c, wall.movie ? &*wall.movie : nullptr, tile, &error);
  } else if (auto ring =
                 DiskFrameRing::Open(*wall.movie, tile, s->ring_slots_, true, 0, RingKeep(c));
             ring.ok()) {
    ready->direct_io = (*ring)->direct();
    s->frames_ = std::move(ring).value();
  } else {
    error = ring.status().message();
  }
  if (s->frames_) {
    const TileSenderOptions so = WallSenderOptions(c, tile, phase);
    if (auto sender = TileSender::Create(so, clock); sender.ok()) {
      s->sender_ = std::move(sender).value();
      s->retransmission_ = so.retransmission;
      ready->gso = s->sender_->socket().gso();
    } else {
      error = fmt::format("socket to {}:{} via NIC {}: {}", so.socket.destination, so.socket.port,
                          c.nic_label(c.routes[tile].nic), sender.status().message());
    }
  }
  ready->ok = error.empty();
  CopyText(error, ready->message, sizeof ready->message);
  return ready->ok ? std::move(s) : nullptr;
}

Status TileStream::MoveTo(uint32_t nic) {
  if (nic == nic_) return {};
  if (Status s = sender_->MoveSocket(WallSocketOptions(config_, stats_.tile, nic)); !s.ok())
    return s;
  nic_ = nic;
  stats_.nic = nic;
  ++stats_.nic_moves;
  return {};
}

void TileStream::Queue(uint64_t frame, uint32_t timestamp, int64_t start_ns, int64_t interval_ns,
                       int64_t give_up_ns) {
  if (!sender_->ended().ok()) return;  // stays idle: neither sent nor skipped
  state_ = State::kWaiting;
  frame_ = frame;
  timestamp_ = timestamp;
  start_ns_ = start_ns;
  interval_ns_ = interval_ns;
  give_up_ns_ = give_up_ns;
  look_again_ns_ = 0;
}

int64_t TileStream::DueNs(int64_t now, bool hurry) const {
  switch (state_) {
    case State::kIdle:
      return kNever;
    case State::kWaiting:
      return std::min(look_again_ns_, give_up_ns_);
    case State::kSending:
      return hurry ? now : sender_->NextBurstNs();
  }
  return kNever;
}

void TileStream::Step(int64_t now, int64_t wait_until, bool hurry) {
  if (state_ == State::kWaiting) {
    TakeFrame(now, wait_until);
    return;
  }
  if (state_ != State::kSending) return;
  // A refusal costs its datagrams only (TileSender counts it); this is an
  // error after which the socket can never send (common/net/send_errors.h).
  if (const IoStatus e = sender_->SendBurst(hurry); !e.ok())
    Report(fmt::format("send: {} ({}): the socket cannot send again, the tile stops streaming",
                       e.message(), ErrnoName(e.error)));
  if (sender_->sending()) return;
  if (acquired_) {
    // NACKs that came while this frame went out may ask for the one before
    // (a hurried frame answers none between its bursts): answered before
    // that one is gone, or all of them would be refused as old.
    if (retransmission_) sender_->AnswerFeedback();
    frames_->Release();  // the ring frees the frame before this one
    // From memory the frames before stay retrievable: a NACK that comes a
    // frame late (a hurried frame, a loaded receiver) is still answered.
    // The movie before's frames are forgotten before they are closed.
    sender_->ForgetFramesFrom(retired_.empty() ? frames_->ReleasedFramesKept() : 1);
    for (auto& r : retired_) Discard(std::move(r));
    retired_.clear();
  }
  state_ = State::kIdle;
}

void TileStream::TakeFrame(int64_t now, int64_t wait_until) {
  const std::byte* frame = frames_->Acquire(frame_, std::min(wait_until, give_up_ns_));
  acquired_ = frame != nullptr;
  if (!frame) {
    now = std::max(now, std::min(wait_until, give_up_ns_));
    if (now < give_up_ns_ && !frames_->failed() && !frames_->Skipped(frame_)) {  // may still come
      look_again_ns_ = now + kLookAgainNs;
      return;
    }
    if (frames_->failed()) {
      Report(fmt::format("reading the tile store: {}; holding the last frame", frames_->error()));
      frame = frames_->LastFrame();
      if (frame) ++stats_.held_frames;
    }
    if (!frame) {
      ++stats_.missed_frames;
      state_ = State::kIdle;
      return;
    }
  }
  sender_->BeginFrame(frame, timestamp_, start_ns_, interval_ns_);
  last_frame_ = frame;
  last_frame_index_ = frame_;
  state_ = State::kSending;
}

TileStream::Prepared TileStream::OpenPrepared(const WallConfig& c, const std::string& source,
                                              uint32_t slots, uint32_t tile,
                                              const std::string& movie_dir, uint64_t first) {
  Prepared p;
  if (const std::optional<LiveMovie> live = ParseLiveMovieDir(movie_dir))
    return OpenLive(c, tile, *live);
  auto movie = OpenTileStore(movie_dir, /*check_files=*/false);
  if (!movie.ok()) {
    p.error = movie.status().message();
    return p;
  }
  if (Status s = CheckManifestMatchesWall(*movie, c.wall); !s.ok()) {
    p.error = s.message();
    return p;
  }
  p.frame_count = movie->frames;
  if (source == "memory") {
    p.frames = MemorySource(c, &*movie, tile, &p.error);
  } else if (auto ring = DiskFrameRing::Open(*movie, tile, slots, true, first, RingKeep(c));
             ring.ok()) {
    p.frames = std::move(ring).value();
  } else {
    p.error = ring.status().message();
  }
  return p;
}

// A live source's tile (common/live/live_tile_frames.h): its ring is on
// the coordinator's server.
TileStream::Prepared TileStream::OpenLive(const WallConfig& c, uint32_t tile,
                                          const LiveMovie& live) {
  Prepared p;
  p.live = true;
  p.frame_count = kLiveFrames;
  const auto settings =
      std::find_if(c.live.begin(), c.live.end(),
                   [&](const LiveSourceSettings& l) { return l.name == live.name; });
  const Fit fit =
      settings == c.live.end() ? Fit::kBars : ParseFit(settings->fit).value_or(Fit::kBars);
  auto frames = LiveTileFrames::Open(live.ring_path, c.wall, tile, fit, RingKeep(c));
  if (!frames.ok()) {
    p.error = fmt::format(
        "live source {}: {} (a live source reaches the tile ranks on the "
        "coordinator's server only)",
        live.name, frames.status().message());
    return p;
  }
  p.frames = std::move(frames).value();
  return p;
}

void TileStream::Prepare(const std::string& movie_dir, uint64_t first_frame) {
  if (preparing_.valid())  // its result, whenever it comes, is dropped there
    discarding_.push_back(
        std::async(std::launch::async, [f = std::move(preparing_)]() mutable { f.wait(); }));
  if (prepared_) Discard(std::move(prepared_->frames));
  prepared_.reset();
  wanted_ = {movie_dir, first_frame};
  StartPreparing();
}

void TileStream::Discard(std::unique_ptr<FrameProvider> frames) {
  if (frames)
    discarding_.push_back(
        std::async(std::launch::async, [f = std::move(frames)]() mutable { f.reset(); }));
}

void TileStream::StartPreparing() {
  std::erase_if(discarding_, [](const std::future<void>& f) {
    return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  });
  if (!wanted_ || discarding_.size() >= kMaxDiscarding) return;  // a later preroll() starts it
  preparing_ = std::async(std::launch::async, &TileStream::OpenPrepared, std::cref(config_),
                          source_, ring_slots_, stats_.tile, wanted_->first, wanted_->second);
  wanted_.reset();
}

TileStream::Preroll TileStream::preroll(std::string* error) {
  StartPreparing();
  if (wanted_) return Preroll::kLoading;
  if (preparing_.valid() &&
      preparing_.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
    prepared_.emplace(preparing_.get());
  if (!prepared_) return preparing_.valid() ? Preroll::kLoading : Preroll::kNone;
  if (prepared_->frames && prepared_->frames->failed())
    prepared_->error = prepared_->frames->error();
  if (!prepared_->error.empty()) {
    *error = prepared_->error;
    return Preroll::kFailed;
  }
  // Its first frames read (a memory source holds them all already).
  const uint64_t want = std::min<uint64_t>(2, prepared_->frame_count);
  return source_ == "memory" || prepared_->live || prepared_->frames->stats().frames_read >= want
             ? Preroll::kReady
             : Preroll::kLoading;
}

void TileStream::SwitchToPrepared() {
  if (!prepared_ || !prepared_->frames) return;  // failed: the coordinator switches no tile
  const FrameSourceStats d = frames_->stats();
  disk_before_.bytes_read += d.bytes_read;
  disk_before_.read_ns += d.read_ns;
  // Kept with any movie switched from before it that no frame since was
  // sent whole from (the sender's history may still point into either).
  retired_.push_back(std::move(frames_));
  frames_ = std::move(prepared_->frames);
  prepared_.reset();
}

// The first run-time error, once, to the coordinator (which prints it).
void TileStream::Report(const std::string& error) {
  if (stats_.error[0] != '\0') return;
  CopyText(error, stats_.error, sizeof stats_.error);
  error_pending_ = true;
}

const TileStats& TileStream::Collect(int64_t cpu_ns, int64_t elapsed_ns) {
  const SendStats& s = sender_->socket().stats();
  const TileSenderStats& t = sender_->stats();
  const FrameSourceStats d = frames_->stats();
  stats_.frames = t.frames;
  stats_.late_frames = t.late_frames;
  stats_.packets = s.datagrams;
  stats_.bytes = s.bytes;
  stats_.syscalls = s.syscalls;
  stats_.send_errors = s.dropped;
  stats_.refusals = s.refusals;
  stats_.refused_resent = s.refused_resent;
  stats_.disk_bytes = disk_before_.bytes_read + d.bytes_read;
  stats_.disk_read_ns = disk_before_.read_ns + d.read_ns;
  stats_.pacer_squeezes = sender_->pacer().stats().squeezes;
  stats_.pacer_sleeps = sleeps_;
  stats_.nacks = t.nacks;
  stats_.retransmitted = t.retransmitted;
  stats_.retransmitted_bytes = t.retransmitted_bytes;
  stats_.refused_old = t.refused_old;
  stats_.refused_cap = t.refused_cap;
  stats_.borrowed = t.borrowed;
  stats_.cpu_ns = cpu_ns;
  stats_.elapsed_ns = elapsed_ns;
  error_pending_ = false;
  return stats_;
}

}  // namespace tilestream
