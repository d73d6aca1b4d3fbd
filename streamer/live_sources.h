// The live sources of a wall (issue 44; docs/live.md), on the coordinator:
// each `[[live]]` (or `streamer --live NAME=SDP`) is received once, here,
// by the receiver's own stream receiver (common/receive/tile_receiver.h:
// assembly, and NACKs to a source whose SDP offers RTX), converted to RGB
// on a thread of its own, and published into a picture ring under
// /dev/shm that the tile ranks on this server read their regions from
// (common/live/live_tile_frames.h). A tick of a live source names the
// newest picture, so that every tile shows the same one.
//
// What goes wrong is counted and said in `status`, never fatal to the
// wall: strangers' packets and garbage (the assembler's counters), a
// source that stopped (no picture for a second: the wall holds the last,
// and shows the slate after `hold_s`), a source of another size than its
// SDP said (frames_wrong_geometry), one that sends faster than the wall
// can show (no more than two pictures a tick are converted; the frames
// between are coalesced, counted).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/base/result.h"
#include "common/image/ppm.h"
#include "common/image/ycbcr.h"
#include "common/live/picture_ring.h"
#include "common/receive/tile_receiver.h"
#include "common/wall/wall_config.h"
#include "common/wire/sdp.h"

namespace tilestream {

class LiveSource {
 public:
  // Receives `settings`' stream into a ring at `ring_path`, for a wall
  // ticking `wall_fps` times a second; `slate`: the picture shown after
  // hold_s without a picture (null: a black one naming the source).
  static Result<std::unique_ptr<LiveSource>> Start(const LiveSourceSettings& settings,
                                                   const std::string& ring_path, double wall_fps,
                                                   std::shared_ptr<const Image> slate);
  ~LiveSource();

  const std::string& name() const { return settings_.name; }
  // The movie directory a LoadMessage names it by (common/live/live_movie.h).
  std::string movie_dir() const;
  // The newest picture (0: none yet).
  uint64_t newest() const { return ring_.newest(); }
  // No picture for kStoppedNs (or none yet).
  bool stopped(int64_t now_ns) const;
  // Its listing's and status's fields.
  void Describe(int64_t now_ns, nlohmann::json* out) const;
  // The newest picture, a thumbnail (common/image/thumbnail.h) for the
  // panel's card; width 0 before the first. From any thread.
  Image Thumbnail() const;
  // On LiveSources' watching thread, once a second: an SDP file rewritten with another stream (a
  // source restarted at another size or format, a new port) is received as it says from now on; the
  // tiles plan their scaling again at its first picture. A file that no longer parses leaves the
  // stream as it was.
  void Refresh();

  static constexpr int64_t kStoppedNs = 1'000'000'000;
  static constexpr int64_t kNever = INT64_MAX;

 private:
  LiveSource(LiveSourceSettings settings, PictureRing ring, double wall_fps,
             std::shared_ptr<const Image> slate);
  // Receives the stream `sdp` describes; stops what received before.
  Status Receive(TileStreamDescription sdp);
  void StopReceiving();
  // The converting thread: each whole frame into the ring (no sooner than
  // min_spacing_ns_ after the one before), or the slate when it is due.
  void Convert();
  // Waits for a whole frame (true) or for the slate to be due (false);
  // stop_ set: returns false too.
  bool WaitForFrame();
  void ConvertNewest();
  void ShowSlate();
  int64_t SlateDueNs() const;  // MonotonicNs; kNever when shown or held for ever

  LiveSourceSettings settings_;
  TileStreamDescription sdp_;
  int64_t sdp_mtime_ns_ = 0;
  Colorimetry colorimetry_ = Colorimetry::kBt709;
  PictureRing ring_;
  mutable std::mutex state_mu_;  // receiver_, sdp_, restarts_: Refresh against Describe
  std::unique_ptr<TileReceiver> receiver_;
  std::thread converter_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool complete_ = false;  // a frame is whole: under mu_
  bool stop_ = false;      // under mu_
  std::atomic<int64_t> last_picture_ns_{0};
  std::atomic<uint64_t> pictures_{0};
  uint64_t restarts_ = 0;  // SDP changes taken
  // Converting thread only, but slate_shown_ (status reads it).
  const int64_t min_spacing_ns_;  // half the wall's frame interval
  const int64_t started_ns_;      // the hold counts from here before a first picture
  std::shared_ptr<const Image> slate_;
  int64_t last_convert_ns_ = 0;
  std::atomic<bool> slate_shown_{false};
};

class LiveSources {
 public:
  ~LiveSources();
  // Every live source of `c`, their rings named for this job (`job`: the
  // coordinator's pid). Fails naming the first that cannot start; a slate
  // that cannot be read is said, and the sources show their own.
  Status Start(const WallConfig& c, int job);
  const LiveSource* Find(const std::string& name) const;
  bool empty() const { return sources_.empty(); }
  // {"live": [...]} in `status`; entries for `movies`' listing.
  void AddStatus(int64_t now_ns, nlohmann::json* out) const;
  void AddToListing(int64_t now_ns, nlohmann::json* listing) const;

 private:
  void Watch();  // each source's Refresh once a second, until destroyed

  std::vector<std::unique_ptr<LiveSource>> sources_;
  std::thread watcher_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;  // under mu_
};

}  // namespace tilestream
