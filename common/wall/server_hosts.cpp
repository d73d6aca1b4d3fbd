#include "common/wall/server_hosts.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <filesystem>

namespace tilestream {
namespace {

bool EqualNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view ShortName(std::string_view host) { return host.substr(0, host.find('.')); }

}  // namespace

bool SameHost(std::string_view a, std::string_view b) {
  if (a.empty() || b.empty()) return false;
  if (EqualNoCase(a, b)) return true;
  const bool a_short = a.find('.') == std::string_view::npos;
  const bool b_short = b.find('.') == std::string_view::npos;
  return (a_short || b_short) && EqualNoCase(ShortName(a), ShortName(b));
}

int ServerOfHost(const WallConfig& c, std::string_view host) {
  for (size_t s = 0; s < c.servers.size(); ++s)
    if (c.servers[s].name.empty() || SameHost(c.servers[s].name, host)) return static_cast<int>(s);
  return -1;
}

std::string ThisHost() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

std::string MovieOnServer(const WallConfig& c, uint32_t server, const std::string& movie) {
  const std::string& store = c.servers[server].store;
  if (store.empty() || movie.empty() || movie.front() == '/') return movie;
  return (std::filesystem::path(store) / movie).string();
}

Result<std::string> MovieOnThisHost(const WallConfig& c, const std::string& movie,
                                    std::string_view host) {
  const bool stores = std::any_of(c.servers.begin(), c.servers.end(),
                                  [](const Server& s) { return !s.store.empty(); });
  if (!stores || movie.empty() || movie.front() == '/') return movie;
  const int server = ServerOfHost(c, host);
  if (server >= 0) return MovieOnServer(c, static_cast<uint32_t>(server), movie);
  std::string names;
  for (const Server& s : c.servers) names += (names.empty() ? "" : ", ") + s.name;
  return Status::InvalidArgument(fmt::format(
      "{}: this host ('{}') is none of the wall's servers ({}), so --movie {} names no store "
      "here: run on a server, or give the movie's absolute path",
      c.source, host, names, movie));
}

}  // namespace tilestream
