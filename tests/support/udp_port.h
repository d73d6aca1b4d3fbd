// Test helper: whether a UDP port is bound on this host, looked up in
// /proc/net/udp rather than probed (a probe's bind could take the port from
// a program starting up).
#pragma once

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace tilestream::testing {

// Whether a UDP socket is bound to `port` on this host (/proc/net/udp).
inline bool UdpPortBound(uint16_t port) {
  std::ifstream in("/proc/net/udp");
  std::string line;
  std::getline(in, line);  // the header
  char suffix[8];
  snprintf(suffix, sizeof suffix, ":%04X", port);
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local;
    fields >> slot >> local;
    if (local.size() >= 5 && local.compare(local.size() - 5, 5, suffix) == 0) return true;
  }
  return false;
}

}  // namespace tilestream::testing
