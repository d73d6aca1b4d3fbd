// The command side of the control channel (docs/control.md): one command
// line in, one JSON line out, applied to the movie's playback. Every road a
// command comes by (the TCP control channel, a display node's keys) ends
// here, so a command has the same effect and reply whichever way it came.
// Needs no MPI and no network: tests and the control fuzz target drive it
// directly.
//
// The line is untrusted bytes (any value, not necessarily UTF-8): replies
// quote it escaped and are always valid JSON (common/base/json_text.h); nothing
// here throws. Not thread-safe: the coordinator's thread alone.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "common/base/result.h"
#include "common/control/control_protocol.h"
#include "common/control/playback.h"
#include "common/control/playlist.h"

namespace tilestream {

class ControlCommands {
 public:
  // Adds what `status` says beyond the playback state (the coordinator's
  // tiles and swap sync) to the reply object.
  using StatusFields = std::function<void(nlohmann::json*)>;

  explicit ControlCommands(StatusFields status = {}) : status_(std::move(status)) {}

  // What `movies` answers: the library's listing ({"library":...,
  // "movies":[...]}), or why there is none. Unset: "no movie library".
  using MovieList = std::function<Result<nlohmann::json>()>;
  void set_movie_list(MovieList list) { movie_list_ = std::move(list); }

  // What `load NAME FRAME` does (the coordinator: pre-roll, then the switch
  // at a tick): the reply's fields, or why not. Unset: "no movie library".
  using MovieLoader =
      std::function<Result<nlohmann::json>(const std::string& name, uint64_t frame)>;
  void set_movie_loader(MovieLoader load) { movie_loader_ = std::move(load); }
  // The playlist `queue`, `playlist`, `next` and `previous` use (and the
  // joystick's next and previous buttons), and how `queue` checks a movie
  // (OK: it may be loaded). Unset: there is no playlist.
  using MovieCheck = std::function<Status(const std::string& name)>;
  void set_playlist(Playlist* playlist, MovieCheck check) {
    playlist_ = playlist;
    movie_check_ = std::move(check);
  }

  // The playback the commands drive; null (the default) is benchmark mode,
  // where only status, help, movies and stop answer.
  void set_playback(Playback* playback) { playback_ = playback; }
  // The wall tick the replies report.
  void set_tick(uint64_t tick) { tick_ = tick; }
  // A `stop` came: the owner ends the job.
  bool stop_requested() const { return stop_requested_; }

  // Parses, applies and answers one line (without its line end).
  std::string Handle(std::string_view line);

  // {"ok":true,"state":...,"frame":...}: the reply of every playback command.
  nlohmann::json PlaybackState() const;

 private:
  std::string Load(const std::string& movie, uint64_t frame);
  std::string Playlists(const Command& c);
  std::string Neighbour(bool next);

  StatusFields status_;
  MovieList movie_list_;
  MovieLoader movie_loader_;
  Playlist* playlist_ = nullptr;
  MovieCheck movie_check_;
  Playback* playback_ = nullptr;
  uint64_t tick_ = 0;
  bool stop_requested_ = false;
};

}  // namespace tilestream
