// Which of a wall's streaming servers a host is, and where a movie lies on
// it ([[server]], docs/config.md). Pure functions of the config, no MPI.
#pragma once

#include <string>
#include <string_view>

#include "common/base/result.h"
#include "common/wall/wall_config.h"

namespace tilestream {

// Whether two host names name the same host: equal, or equal up to the
// first dot where one is a short name ("stream1" and "stream1.lab.org").
// Case-insensitive, as DNS names are.
bool SameHost(std::string_view a, std::string_view b);

// The index of the server that `host` is, or -1. An unnamed server (a wall
// without [[server]] entries) is any host.
int ServerOfHost(const WallConfig& c, std::string_view host);

// This machine's host name (gethostname).
std::string ThisHost();

// The directory of `movie` on server `server`: a relative path is looked up
// in the server's store, when it has one; anything else is as given.
std::string MovieOnServer(const WallConfig& c, uint32_t server, const std::string& movie);

// The movie's directory on this host: on a wall of several servers whose
// stores are set, this host must be one of them.
Result<std::string> MovieOnThisHost(const WallConfig& c, const std::string& movie,
                                    std::string_view host);

}  // namespace tilestream
