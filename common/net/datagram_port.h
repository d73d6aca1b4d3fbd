// Small UDP datagrams of the control side: the swap sync's time-critical
// lines (common/control/sync_datagram.h). A socket bound to receive from
// anyone, or one connected to talk to one peer; both non-blocking. Not the
// media path (common/net/udp_socket.h).
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/base/result.h"
#include "common/base/unique_fd.h"

namespace tilestream {

Result<UniqueFd> BindUdp(const std::string& address, uint16_t port);
Result<UniqueFd> ConnectUdp(const std::string& address, uint16_t port);

// Sends `copies` copies of `datagram` in one system call, to `to` (null:
// the connected peer). How many the kernel took (0 on a refusal: a lost
// datagram, which the copies and TCP stand).
int SendCopies(int fd, std::string_view datagram, int copies, const sockaddr_storage* to = nullptr,
               socklen_t to_length = 0);

}  // namespace tilestream
