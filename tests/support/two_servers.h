// A 4x2 wall over two servers, "stream1" and "stream2", with two NICs each
// (both called eth2 and eth3), for tests of what several servers change.
#pragma once

#include <string>

#include "common/wall/wall_config.h"

namespace tilestream::testing {

inline constexpr const char* kTwoServersToml = R"(
[wall]
columns = 4
rows = 2
tile_width = 64
tile_height = 32

[[server]]
name = "stream1"
store = "/data/one"

[[server]]
name = "stream2"
store = "/data/two"

[[nic]]
server = "stream1"
name = "eth2"
address = "10.10.1.1"

[[nic]]
server = "stream1"
name = "eth3"
address = "10.10.2.1"

[[nic]]
server = "stream2"
name = "eth2"
address = "10.10.3.1"

[[nic]]
server = "stream2"
name = "eth3"
address = "10.10.4.1"

[[node]]
name = "top"
address = "10.10.0.11"
tiles = ["r0c0", "r0c1", "r0c2", "r0c3"]

[[node]]
name = "bottom"
address = "10.10.0.12"
tiles = ["r1c0", "r1c1", "r1c2", "r1c3"]

[mpi]
network = "10.99.0.0/24"
)";

inline WallConfig TwoServers() { return *ParseWallConfig(kTwoServersToml, "two.toml"); }

}  // namespace tilestream::testing
