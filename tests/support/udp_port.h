// Test helpers: the UDP sockets of this host as /proc/net/udp lists them,
// looked up rather than probed (a probe's bind could take the port from a
// program starting up).
#pragma once

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace tilestream::testing {

// Calls each(queues) for every socket bound to `port`, where queues is its
// "tx_queue:rx_queue" field in hex; stops early when each returns false.
template <typename F>
void ForEachUdpSocket(uint16_t port, F each) {
  std::ifstream in("/proc/net/udp");
  std::string line;
  std::getline(in, line);  // the header
  char suffix[8];
  snprintf(suffix, sizeof suffix, ":%04X", port);
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues;
    fields >> slot >> local >> remote >> state >> queues;
    if (local.size() >= 5 && local.compare(local.size() - 5, 5, suffix) == 0 && !each(queues))
      return;
  }
}

// Whether a UDP socket is bound to `port` on this host.
inline bool UdpPortBound(uint16_t port) {
  bool bound = false;
  ForEachUdpSocket(port, [&](const std::string&) { return !(bound = true); });
  return bound;
}

// Whether every socket bound to `port` has nothing left to read: a receiver
// has taken all that arrived.
inline bool UdpQueueEmpty(uint16_t port) {
  bool empty = true;
  ForEachUdpSocket(port, [&](const std::string& queues) {
    empty = queues.size() <= 9 || queues.substr(9).find_first_not_of('0') == std::string::npos;
    return empty;
  });
  return empty;
}

}  // namespace tilestream::testing
