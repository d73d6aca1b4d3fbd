#include "common/control/playlist.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace tilestream {

Status Playlist::Queue(const std::string& name) {
  if (movies_.size() >= kMaxMovies)
    return Status::InvalidArgument(fmt::format(
        "the playlist holds {} movies at most (playlist clear empties it)", kMaxMovies));
  movies_.push_back(name);
  return Status::Ok();
}

void Playlist::Clear() {
  movies_.clear();
  current_ = -1;
}

void Playlist::Playing(const std::string& name) {
  const int n = static_cast<int>(movies_.size());
  for (int i = 1; i <= n; ++i) {
    const int at = (current_ + i) % n;  // from the entry after the current one, round
    if (movies_[static_cast<size_t>(at)] == name) {
      current_ = at;
      return;
    }
  }
  current_ = -1;
}

std::optional<std::string> Playlist::After(bool wrap) const {
  if (movies_.empty()) return std::nullopt;
  const size_t next = current_ < 0 ? 0 : static_cast<size_t>(current_) + 1;
  if (next < movies_.size()) return movies_[next];
  return wrap ? std::optional(movies_.front()) : std::nullopt;
}

std::optional<std::string> Playlist::Before(bool wrap) const {
  if (current_ < 0) return std::nullopt;
  if (current_ > 0) return movies_[static_cast<size_t>(current_ - 1)];
  return wrap ? std::optional(movies_.back()) : std::nullopt;
}

nlohmann::json Playlist::ToJson() const { return {{"playlist", movies_}, {"current", current_}}; }

}  // namespace tilestream
