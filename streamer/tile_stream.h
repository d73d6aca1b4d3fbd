// One tile of a tile rank: its frames (read-ahead ring from the tile store,
// or memory for benchmarks), its socket on the tile's NIC, and the frame it
// is sending. A rank's loop (tile_rank.cpp) drives all of its tiles through
// Step, so that one thread paces several streams, each on its own schedule:
//
//   Queue(frame) -> waiting for the frame's pixels -> sending, one burst per
//   Step at the burst's slot -> idle.
//
// Not thread-safe; no MPI. No allocation or logging per frame.
#pragma once

#include <cstdint>
#include <future>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/live/live_tile_frames.h"
#include "common/send/tile_sender.h"
#include "common/store/frame_ring.h"
#include "streamer/messages.h"
#include "streamer/streamer_options.h"

namespace tilestream {

class TileStream {
 public:
  static constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

  // Opens tile `tile`'s frames and socket; `ready` says how it went (null
  // if it failed). `phase`: 0..1, where its bursts fall between the other
  // streams' (Pacer::Options::phase).
  static std::unique_ptr<TileStream> Open(const Wall& wall, const StreamerOptions& options,
                                          uint32_t tile, double phase, Clock* clock,
                                          ReadyMessage* ready);

  // The frame to send next, paced over [start_ns, start_ns + interval_ns)
  // once its pixels are in; if they are not by give_up_ns the frame is
  // missed (or, after a read error, the last frame is sent again). Nothing
  // once a hard send error ended the tile.
  // REQUIRES: !busy().
  void Queue(uint64_t frame, uint32_t timestamp, int64_t start_ns, int64_t interval_ns,
             int64_t give_up_ns);
  void SetReadAhead(int32_t step) { frames_->SetReadAhead(step); }
  // Playing (not benchmarking): when `frame` is due (FrameProvider).
  void SetPlayClock(uint64_t frame, int64_t due_ns, int64_t interval_ns) {
    frames_->SetPlayClock(frame, due_ns, interval_ns);
  }

  // Pre-roll of a `load` (docs/streamer.md, "Loading a movie"): opens this
  // tile of the store in `movie_dir` on a thread of its own and reads from
  // `first_frame` on, while the current movie plays. A newer Prepare
  // replaces it; what it replaces is closed on a thread of its own, and
  // while kMaxDiscarding such closings are under way (a `load` storm) the
  // opening waits for one to end: the caller never does.
  void Prepare(const std::string& movie_dir, uint64_t first_frame);
  enum class Preroll { kNone, kLoading, kReady, kFailed };
  // How the pre-roll goes: ready once its first frames are read; *error
  // says why it failed.
  Preroll preroll(std::string* error);
  // From the next Queue on, frames come from the prepared movie. The
  // current movie's frames stay until its last frame can no longer be
  // asked for again; nothing without a movie prepared. REQUIRES: !busy().
  void SwitchToPrepared();

  bool busy() const { return state_ != State::kIdle; }
  bool waiting_for_frame() const { return state_ == State::kWaiting; }
  // When Step has something to do: the next burst's slot (now, hurrying),
  // or when to look for the frame's pixels again; kNever when idle.
  int64_t DueNs(int64_t now, bool hurry) const;
  // Does what is due: takes the frame's pixels (waiting for them until
  // `wait_until` at most), or sends the next burst. `hurry`: the next tick
  // is due, the rest of the frame goes at once.
  void Step(int64_t now, int64_t wait_until, bool hurry);

  // Streams from NIC `nic` of the config from now on (its configured NIC
  // is down, or back: streamer/tile_rank.cpp), between bursts. On error it
  // stays where it is.
  Status MoveTo(uint32_t nic);
  uint32_t nic() const { return nic_; }

  // The socket on which the receiver's NACKs come (-1: retransmission off
  // for this tile), and answering them (common/send/tile_sender.h).
  int feedback_fd() const { return retransmission_ ? sender_->socket().fd() : -1; }
  void AnswerFeedback() { sender_->AnswerFeedback(); }
  void EndStream() { sender_->EndStream(); }

  void CountSleep() { ++sleeps_; }
  void CountSkippedTicks(uint64_t n) { stats_.skipped_ticks += n; }
  void CountTicksSeenLate(uint64_t n) { stats_.ticks_seen_late += n; }
  // The counters, with `cpu_ns` as this tile's share of its rank's CPU.
  // Clears error_pending().
  const TileStats& Collect(int64_t cpu_ns, int64_t elapsed_ns);
  // A first run-time error not yet collected.
  bool error_pending() const { return error_pending_; }
  const TileSender& sender() const { return *sender_; }
  uint32_t tile() const { return stats_.tile; }
  // The pixels of the frame sent last (valid until the next is taken: the
  // ring holds a released frame until the next is released), or null.
  const std::byte* last_frame() const { return last_frame_; }
  uint64_t last_frame_index() const { return last_frame_index_; }

 private:
  enum class State { kIdle, kWaiting, kSending };
  TileStream(uint32_t tile, const WallConfig& config)
      : config_(config), nic_(config.routes[tile].nic) {
    stats_.tile = tile;
    stats_.nic = nic_;
  }
  void TakeFrame(int64_t now, int64_t wait_until);
  // A movie's frames opened for a load, or why they could not be.
  struct Prepared {
    std::unique_ptr<FrameProvider> frames;
    uint64_t frame_count = 0;
    bool live = false;  // a live source's tile: ready at once
    std::string error;
  };
  static Prepared OpenLive(const WallConfig& c, uint32_t tile, const LiveMovie& live);
  void Discard(std::unique_ptr<FrameProvider> frames);
  void StartPreparing();  // the wanted opening, unless too many closings are under way
  static constexpr size_t kMaxDiscarding = 4;
  static Prepared OpenPrepared(const WallConfig& c, const std::string& source, uint32_t slots,
                               uint32_t tile, const std::string& movie_dir, uint64_t first);
  void Report(const std::string& error);

  const WallConfig& config_;
  uint32_t nic_;  // the NIC it streams from now
  std::unique_ptr<FrameProvider> frames_;
  // Loading: the opening wanted (movie directory, first frame), the one
  // under way, its result, and the frames of the movies before (one, or
  // more when no frame was sent whole between switches), kept until the
  // sender forgets their last frames. What is no longer wanted is closed
  // on a thread of its own (a memory source may still be reading a whole
  // movie; a ring's reader is joined, its buffers freed), reaped when done.
  std::string source_;
  uint32_t ring_slots_ = 0;
  std::optional<std::pair<std::string, uint64_t>> wanted_;
  std::future<Prepared> preparing_;
  std::optional<Prepared> prepared_;
  std::vector<std::unique_ptr<FrameProvider>> retired_;
  std::vector<std::future<void>> discarding_;
  FrameSourceStats disk_before_;  // of the movies before this one
  std::unique_ptr<TileSender> sender_;
  State state_ = State::kIdle;
  bool acquired_ = false;  // the frame being sent must be released
  const std::byte* last_frame_ = nullptr;
  uint64_t last_frame_index_ = 0;
  uint64_t frame_ = 0;
  uint32_t timestamp_ = 0;
  int64_t start_ns_ = 0, interval_ns_ = 0, give_up_ns_ = 0, look_again_ns_ = 0;
  uint64_t sleeps_ = 0;
  bool retransmission_ = false;
  bool error_pending_ = false;
  TileStats stats_;
};

}  // namespace tilestream
