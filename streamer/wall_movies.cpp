#include "streamer/wall_movies.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstring>
#include <filesystem>
#include <string_view>

#include "common/base/clock.h"
#include "common/control/movie_listing.h"
#include "common/live/live_tile_frames.h"
#include "common/wall/wall_config.h"
#include "streamer/rank_messages.h"

namespace tilestream {
namespace {

// The movie the job starts with: named by its directory.
MovieLoads::Movie PlayingFirst(const Wall& wall) {
  if (!wall.movie) return {"", "", 2};  // the synthetic pattern's frames, or black
  const std::string& dir = wall.movie->directory;
  std::filesystem::path p = std::filesystem::path(dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();  // "dir/"
  return {p.filename().string(), dir, wall.movie->frames};
}

}  // namespace

WallMovies::WallMovies(MPI_Comm comm, const WallConfig& c, const RankPlan& plan, const Wall& wall)
    : comm_(comm), c_(c), plan_(plan), loads_(c.tile_count(), PlayingFirst(wall)), presence_(c) {}

Result<MovieLoads::Movie> WallMovies::Loadable(const std::string& name, uint64_t frame) const {
  const LiveSource* live = live_.Find(name);
  if (!live) return LoadableMovie(c_, name, frame, &presence_);
  if (frame != 0)
    return Status::InvalidArgument(
        fmt::format("cannot load {} at frame {}: a live source plays "
                    "from now, not from a frame",
                    name, frame));
  return MovieLoads::Movie{name, live->movie_dir(), kLiveFrames};
}

std::function<std::optional<Image>(std::string_view name)> WallMovies::LivePicture() const {
  return [this](std::string_view name) -> std::optional<Image> {
    const LiveSource* s = live_.Find(std::string(name));
    if (!s) return std::nullopt;
    return s->Thumbnail();
  };
}

ControlCommands::MovieList WallMovies::Lister() const {
  const ControlCommands::MovieList library =
      c_.library_path.empty() ? nullptr : LibraryLister(c_, &presence_);
  return [library, this]() -> Result<nlohmann::json> {
    nlohmann::json listing = {{"library", c_.library_path}, {"truncated", false}};
    if (library) {
      auto l = library();
      if (!l.ok()) return l.status();
      listing = std::move(l).value();
    }
    live_.AddToListing(MonotonicNs(), &listing);
    return listing;
  };
}

uint64_t WallMovies::FrameToSend(uint64_t frame, const Playback& playback) {
  if (!live_playing_) return frame;
  if (playback.playing() && playback.speed() != 0) live_picture_ = live_playing_->newest();
  return live_picture_;
}

void WallMovies::AddStatus(nlohmann::json* out) const {
  loads_.AddStatus(out);
  live_.AddStatus(MonotonicNs(), out);
  if (live_playing_) {  // no frame count to scrub: the picture shown
    out->erase("frames");
    (*out)["frame"] = live_picture_;
    (*out)["playing_live"] = true;
  }
}

Result<nlohmann::json> WallMovies::Load(const std::string& name, uint64_t frame, bool at_end) {
  auto movie = Loadable(name, frame);
  if (!movie.ok()) return movie.status();
  LoadMessage m;
  m.generation = loads_.Begin(*movie, frame, at_end);
  m.first_frame = frame;
  std::strncpy(m.movie, movie->dir.c_str(), sizeof m.movie - 1);
  for (int rank = 1; rank <= plan_.tile_ranks(); ++rank) SendMessage(comm_, rank, kTagLoad, m);
  spdlog::info("load {} from frame {}: the tiles pre-roll it", name, frame);
  return nlohmann::json{{"loading", name}, {"frame", frame}, {"load", m.generation}};
}

void WallMovies::DrainReports() {
  LoadedMessage m;
  int from = 0;
  while (TryReceive(comm_, MPI_ANY_SOURCE, kTagLoaded, &m, &from)) {
    if (m.tile >= c_.tile_count() || plan_.rank(m.tile) != from) continue;  // not from its rank
    const std::string tile = TileId::FromIndex(m.tile, c_.wall.layout).Name();
    const std::string_view message(m.message, strnlen(m.message, sizeof m.message));
    if (auto error = loads_.Loaded(m.generation, m.tile, m.ok != 0, message, tile))
      spdlog::error("{}", *error);
  }
  std::string names;
  while (TryReceiveText(comm_, kTagLibrary, &names, &from)) {
    if (from >= 1 && from <= plan_.tile_ranks() && !plan_.tiles(from).empty())
      presence_.Report(c_.routes[plan_.tiles(from).front()].server, names);
  }
}

// In the last second of a movie of the playlist, the next one's pre-roll
// begins (once per movie: a failed one is not tried again).
void WallMovies::BeforeTick(uint64_t tick, Playback* playback) {
  if (const auto first = loads_.TakeReady(tick, at_end_)) {
    playback->Load(loads_.playing().frames, *first);
    playlist_.Playing(loads_.playing().name);
    live_playing_ = live_.Find(loads_.playing().name);
    spdlog::info("tick {}: every tile plays {} from frame {}", tick, loads_.playing().name, *first);
  }
  const uint64_t left = playback->frames() - playback->frame();
  if (loads_.loading() || playlist_.current() < 0 || !playback->playing() ||
      playback->speed() <= 0 || left > static_cast<uint64_t>(c_.wall.fps) ||
      advanced_from_ == loads_.playing_generation() + 1)
    return;
  advanced_from_ = loads_.playing_generation() + 1;
  const auto next = playlist_.After(playback->loop());
  if (!next || *next == loads_.playing().name) return;  // the movie loops by itself
  if (auto r = Load(*next, 0, /*at_end=*/true); !r.ok())
    spdlog::error("playlist: {}; {} plays on", r.status().message(), loads_.playing().name);
}

}  // namespace tilestream
