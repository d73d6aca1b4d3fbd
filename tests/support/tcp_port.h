// Test helper: a TCP port free on 127.0.0.1 now (bound, noted, released),
// for a server a test starts on a port it must name beforehand.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>

#include "common/net/line_channel.h"

namespace tilestream::testing {

inline uint16_t FreeTcpPort() {
  auto fd = ListenTcp("127.0.0.1", 0);
  sockaddr_in a{};
  socklen_t len = sizeof a;
  if (fd.ok()) getsockname(fd->get(), reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

}  // namespace tilestream::testing
