#include "common/control/movie_loads.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "common/control/movie_listing.h"
#include "common/store/movie_library.h"

namespace tilestream {

uint64_t MovieLoads::Begin(const Movie& movie, uint64_t first_frame, bool at_end) {
  loading_ = movie;
  first_frame_ = first_frame;
  at_end_ = at_end;
  std::fill(ready_.begin(), ready_.end(), false);
  ready_count_ = 0;
  return ++sent_;
}

std::optional<std::string> MovieLoads::Loaded(uint64_t generation, uint32_t tile, bool ok,
                                              std::string_view message,
                                              const std::string& tile_name) {
  if (!loading_ || generation != sent_ || tile >= ready_.size()) return std::nullopt;
  if (!ok) {
    const std::string error =
        "load " + loading_->name + ": tile " + tile_name + ": " + std::string(message) + "; " +
        (playing_.name.empty() ? std::string("the wall") : playing_.name) + " plays on";
    last_ = {{"movie", loading_->name}, {"load", sent_}, {"error", error}};
    loading_.reset();
    return error;
  }
  if (!ready_[tile]) {
    ready_[tile] = true;
    ++ready_count_;
  }
  return std::nullopt;
}

std::optional<uint64_t> MovieLoads::TakeReady(uint64_t tick, bool at_end) {
  if (!loading_ || ready_count_ < ready_.size() || (at_end_ && !at_end)) return std::nullopt;
  playing_ = std::move(*loading_);
  loading_.reset();
  playing_generation_ = sent_;
  last_ = {{"movie", playing_.name}, {"load", sent_}, {"tick", tick}, {"frame", first_frame_}};
  return first_frame_;
}

void MovieLoads::AddStatus(nlohmann::json* out) const {
  (*out)["movie"] = playing_.name;
  (*out)["movie_generation"] = playing_generation_;
  if (loading_)
    (*out)["loading"] = {{"movie", loading_->name},     {"load", sent_},
                         {"frame", first_frame_},       {"at_end", at_end_},
                         {"tiles_ready", ready_count_}, {"tiles", ready_.size()}};
  if (!last_.is_null()) (*out)["last_load"] = last_;
}

Result<MovieLoads::Movie> LoadableMovie(const WallConfig& c, const std::string& name,
                                        uint64_t first_frame, const LibraryPresence* presence) {
  if (c.library_path.empty())
    return Status::InvalidArgument("no movie library (library.path, or streamer --library)");
  LibraryMovie m = LookUpMovie(c.library_path, name, c.wall, TilesOnThisHost(c));
  if (m.problem.empty() && presence) m.problem = presence->Missing(name);
  if (!m.problem.empty())
    return Status::InvalidArgument(fmt::format("cannot load {}: {}", name, m.problem));
  if (first_frame >= m.manifest->frames)
    return Status::InvalidArgument(fmt::format("cannot load {} at frame {}: it has {} frames", name,
                                               first_frame, m.manifest->frames));
  return MovieLoads::Movie{name, m.manifest->directory, m.manifest->frames};
}

}  // namespace tilestream
