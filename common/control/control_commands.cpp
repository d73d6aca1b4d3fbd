#include "common/control/control_commands.h"

#include <nlohmann/json.hpp>

#include "common/base/json_text.h"
#include "common/control/control_protocol.h"
#include "common/control/movie_listing.h"

namespace tilestream {

std::string ControlCommands::Handle(std::string_view line) {
  auto command = ParseCommand(line);
  if (!command.ok()) return ErrorReply(command.status().message());
  switch (command->kind) {
    case CommandKind::kHelp:
      return JsonText({{"ok", true}, {"commands", std::string(CommandHelp())}});
    case CommandKind::kStatus: {
      nlohmann::json j = PlaybackState();
      if (status_) status_(&j);
      if (playlist_) j.update(playlist_->ToJson());
      return JsonText(j);
    }
    case CommandKind::kStop:
      stop_requested_ = true;
      return JsonText({{"ok", true}, {"stopping", true}});
    case CommandKind::kMovies:
      return MoviesReply(movie_list_);
    default:
      break;
  }
  if (!playback_) return ErrorReply("benchmark mode: nothing to control");
  switch (command->kind) {
    case CommandKind::kLoad:
      return Load(command->movie, static_cast<uint64_t>(command->frame));
    case CommandKind::kQueue:
    case CommandKind::kPlaylist:
      return Playlists(*command);
    case CommandKind::kNext:
    case CommandKind::kPrevious:
      return Neighbour(command->kind == CommandKind::kNext);
    case CommandKind::kButton:
      if (command->on && command->index == playback_->joystick().next_button)
        return Neighbour(true);
      if (command->on && command->index == playback_->joystick().previous_button)
        return Neighbour(false);
      break;
    default:
      break;
  }
  std::string error;
  if (!playback_->Apply(*command, &error)) return ErrorReply(error);
  return JsonText(PlaybackState());
}

std::string ControlCommands::Load(const std::string& movie, uint64_t frame) {
  if (!movie_loader_) return ErrorReply("no movie library (library.path, or streamer --library)");
  auto reply = movie_loader_(movie, frame);
  if (!reply.ok()) return ErrorReply(reply.status().message());
  nlohmann::json j{{"ok", true}};
  j.update(*reply);
  return JsonText(j);
}

std::string ControlCommands::Playlists(const Command& c) {
  if (!playlist_) return ErrorReply("no playlist without a movie library");
  if (c.kind == CommandKind::kQueue) {
    if (Status s = movie_check_ ? movie_check_(c.movie) : Status::Ok(); !s.ok())
      return ErrorReply(s.message());
    if (Status s = playlist_->Queue(c.movie); !s.ok()) return ErrorReply(s.message());
  } else if (c.on) {
    playlist_->Clear();
  }
  nlohmann::json j = playlist_->ToJson();
  j["ok"] = true;
  j["loop"] = playback_->loop();
  return JsonText(j);
}

// `next` or `previous`: that movie of the playlist, from its first frame.
std::string ControlCommands::Neighbour(bool next) {
  if (!playlist_ || playlist_->empty()) return ErrorReply("the playlist is empty (queue NAME)");
  const auto movie =
      next ? playlist_->After(playback_->loop()) : playlist_->Before(playback_->loop());
  if (!movie)
    return ErrorReply(next ? "the playlist's last movie plays (loop on starts it over)"
                           : "no movie before this one in the playlist");
  return Load(*movie, 0);
}

nlohmann::json ControlCommands::PlaybackState() const {
  nlohmann::json j{{"ok", true}};
  if (!playback_) {
    j["state"] = "benchmark";
    return j;
  }
  j["state"] = playback_->playing() ? "playing" : "paused";
  j["frame"] = playback_->frame();
  j["frames"] = playback_->frames();
  j["speed"] = playback_->speed();
  j["loop"] = playback_->loop();
  j["scrubbing"] = playback_->scrubbing();
  j["tick"] = tick_;
  return j;
}

}  // namespace tilestream
