#include "common/control/control_commands.h"

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
  if (command->kind == CommandKind::kLoad) return Load(*command);
  std::string error;
  if (!playback_->Apply(*command, &error)) return ErrorReply(error);
  return JsonText(PlaybackState());
}

std::string ControlCommands::Load(const Command& c) {
  if (!movie_loader_) return ErrorReply("no movie library (library.path, or streamer --library)");
  auto reply = movie_loader_(c.movie, static_cast<uint64_t>(c.frame));
  if (!reply.ok()) return ErrorReply(reply.status().message());
  nlohmann::json j{{"ok", true}};
  j.update(*reply);
  return JsonText(j);
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
