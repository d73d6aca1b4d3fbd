// The receiver's command line and the wall config it leads to: a config
// file, SDP files of third-party streams, or the default loopback wall for
// --layout. No SDL or sockets here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "common/wall/wall_config.h"
#include "receiver/node_receiver.h"

namespace tilestream {

struct ReceiverFlags {
  NodeReceiverOptions node;
  std::string config_path;
  std::string layout;
  std::vector<std::string> sdp_files;
  bool check = false;              // pre-flight checks of this host, then exit
  std::string log_level = "info";  // common/base/log.h
};

// Parses the flags. Returns an exit code to end with (help printed: 0, bad
// flags or a bad combination: 2, said on stderr), or nullopt to go on.
std::optional<int> ParseReceiverFlags(int argc, char** argv, ReceiverFlags* flags);

// The wall the flags describe; without --node, the node is the config's only
// one, or "localhost".
Result<WallConfig> ReceiverWallConfig(ReceiverFlags* flags);

}  // namespace tilestream
