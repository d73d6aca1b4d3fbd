#include "common/control/library_presence.h"

#include <fmt/format.h>

#include "common/control/control_protocol.h"

namespace tilestream {

LibraryPresence::LibraryPresence(const WallConfig& c) {
  if (!c.several_servers()) return;
  for (const Server& s : c.servers) servers_.push_back(s.name);
  reports_.resize(servers_.size());
}

void LibraryPresence::Report(uint32_t server, std::string_view names) {
  if (server >= servers_.size()) return;
  std::set<std::string> present;
  while (!names.empty() && present.size() < kMaxLibraryMovies) {
    const size_t end = names.find('\n');
    const std::string_view name = names.substr(0, end);
    if (ValidMovieName(name)) present.emplace(name);
    names.remove_prefix(end == std::string_view::npos ? names.size() : end + 1);
  }
  const std::lock_guard lock(mu_);
  reports_[server] = std::move(present);
}

std::string LibraryPresence::Missing(const std::string& name) const {
  const std::lock_guard lock(mu_);
  for (size_t s = 0; s < servers_.size(); ++s) {
    if (!reports_[s]) return fmt::format("server {} has not said yet what it holds", servers_[s]);
    if (!reports_[s]->contains(name))
      return fmt::format(
          "not on server {} (its files for that server's tiles are missing or "
          "incomplete there)",
          servers_[s]);
  }
  return "";
}

void LibraryPresence::Apply(Library* library) const {
  for (LibraryMovie& m : library->movies)
    if (m.problem.empty()) m.problem = Missing(m.name);
}

std::string PresentMovies(const Library& library) {
  std::string names;
  for (const LibraryMovie& m : library.movies)
    if (m.problem.empty()) names += m.name + "\n";
  return names;
}

}  // namespace tilestream
