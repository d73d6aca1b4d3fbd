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

// Whether every socket bound to `port` has nothing left to read: a receiver
// has taken all that arrived (the tx_queue:rx_queue field of /proc/net/udp).
inline bool UdpQueueEmpty(uint16_t port) {
  std::ifstream in("/proc/net/udp");
  std::string line;
  std::getline(in, line);  // the header
  char suffix[8];
  snprintf(suffix, sizeof suffix, ":%04X", port);
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues;
    fields >> slot >> local >> remote >> state >> queues;
    const bool mine = local.size() >= 5 && local.compare(local.size() - 5, 5, suffix) == 0;
    if (mine && queues.size() > 9 && queues.substr(9).find_first_not_of('0') != std::string::npos)
      return false;
  }
  return true;
}

}  // namespace tilestream::testing
