// The coordinator's movies (docs/streamer.md, "Loading a movie"): `load`
// checked and sent to every tile rank, the ranks' pre-roll reports, the
// switch before a tick once every tile is ready, and the playlist's next
// movie pre-rolled in the last second of the one playing. Owns the
// MPI-free state (common/control/movie_loads.h, common/control/playlist.h) and
// does its messages; the frame clock's thread alone.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "common/base/result.h"
#include "common/control/control_commands.h"
#include "common/control/library_presence.h"
#include "common/control/movie_loads.h"
#include "common/control/playback.h"
#include "common/control/playlist.h"
#include "common/wall/wall_config.h"
#include "streamer/live_sources.h"
#include "streamer/rank_plan.h"
#include "streamer/streamer_options.h"

namespace tilestream {

class WallMovies {
 public:
  WallMovies(MPI_Comm comm, const WallConfig& c, const RankPlan& plan, const Wall& wall);

  // `load NAME FRAME`: checked, then every tile rank told to pre-roll it;
  // the reply's fields. `at_end`: switched to only as the movie playing
  // ends (the playlist's next).
  Result<nlohmann::json> Load(const std::string& name, uint64_t frame, bool at_end = false);
  // The live sources (streamer/live_sources.h), received from now on.
  Status StartLive(int job) { return live_.Start(c_, job); }
  // Whether `name` can be loaded from `frame` (a library movie, or a live
  // source from frame 0), and as what.
  Result<MovieLoads::Movie> Loadable(const std::string& name, uint64_t frame) const;
  // `movies`: the library's listing (if any) and the live sources.
  ControlCommands::MovieList Lister() const;
  // A live source's thumbnail, for the HTTP workers (HttpApi's live_picture).
  std::function<std::optional<Image>(std::string_view name)> LivePicture() const;
  bool has_movies() const { return !c_.library_path.empty() || !live_.empty(); }
  // The frame tick's message names for the playback's frame `frame`: a
  // live source's newest picture while it plays (the same picture while
  // paused), else `frame` itself.
  uint64_t FrameToSend(uint64_t frame, const Playback& playback);
  // Takes the ranks' pre-roll reports (each failure said once) and their
  // servers' library reports.
  void DrainReports();
  // Which movies every server holds (the listing's and load's check).
  const LibraryPresence* presence() const { return &presence_; }
  // Before tick `tick` is played by `playback`: the switch, if every tile
  // is ready, and the playlist's next pre-roll when it is due.
  void BeforeTick(uint64_t tick, Playback* playback);
  // After the tick's frame `frame` was taken from `playback`.
  void AfterTick(uint64_t frame, const Playback& playback) {
    at_end_ = frame + 1 == playback.frames() && playback.speed() > 0;
  }

  Playlist* playlist() { return &playlist_; }
  uint64_t load_generation() const { return loads_.sent(); }
  uint64_t movie_generation() const { return loads_.playing_generation(); }
  void AddStatus(nlohmann::json* out) const;

 private:
  MPI_Comm comm_;
  const WallConfig& c_;
  const RankPlan& plan_;
  MovieLoads loads_;
  LibraryPresence presence_;
  Playlist playlist_;
  LiveSources live_;
  const LiveSource* live_playing_ = nullptr;  // the live source playing, if one is
  uint64_t live_picture_ = 0;                 // the picture its last tick named
  bool at_end_ = false;                       // the movie playing sent its last frame (forwards)
  uint64_t advanced_from_ = 0;                // the playlist advanced from generation - 1
};

}  // namespace tilestream
