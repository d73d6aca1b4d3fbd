#include "common/net/udp_socket.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>

// Addresses and socket buffers; the sender is in udp_sender.cpp, the
// receiver in udp_receiver.cpp.

namespace tilestream {

Result<SocketAddress> SocketAddress::Resolve(const std::string& host, uint16_t port) {
  SocketAddress a;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&a.storage);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&a.storage);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    a.length = sizeof *v4;
    return a;
  }
  if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    a.length = sizeof *v6;
    return a;
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  if (const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res); rc != 0 || !res)
    return Status::NotFound(fmt::format("cannot resolve '{}': {}", host, gai_strerror(rc)));
  std::memcpy(&a.storage, res->ai_addr, res->ai_addrlen);
  a.length = static_cast<socklen_t>(res->ai_addrlen);
  freeaddrinfo(res);
  if (a.storage.ss_family == AF_INET)
    v4->sin_port = htons(port);
  else
    v6->sin6_port = htons(port);
  return a;
}

std::string SocketAddress::ToString() const {
  char buf[INET6_ADDRSTRLEN] = "?";
  if (storage.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&storage);
    inet_ntop(AF_INET, &v4->sin_addr, buf, sizeof buf);
    return fmt::format("{}:{}", buf, ntohs(v4->sin_port));
  }
  const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&storage);
  inet_ntop(AF_INET6, &v6->sin6_addr, buf, sizeof buf);
  return fmt::format("[{}]:{}", buf, ntohs(v6->sin6_port));
}

bool SocketAddress::SameHost(const sockaddr_storage& other) const {
  if (other.ss_family != storage.ss_family) return false;
  if (storage.ss_family == AF_INET) {
    return reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in*>(&other)->sin_addr.s_addr;
  }
  return std::memcmp(&reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr,
                     &reinterpret_cast<const sockaddr_in6*>(&other)->sin6_addr, 16) == 0;
}

size_t SetSocketBuffer(int fd, bool send, size_t want) {
  const int v = static_cast<int>(std::min<size_t>(want, INT_MAX / 2));
  const int force = send ? SO_SNDBUFFORCE : SO_RCVBUFFORCE;
  const int plain = send ? SO_SNDBUF : SO_RCVBUF;
  if (setsockopt(fd, SOL_SOCKET, force, &v, sizeof v) != 0)
    setsockopt(fd, SOL_SOCKET, plain, &v, sizeof v);
  int got = 0;
  socklen_t len = sizeof got;
  getsockopt(fd, SOL_SOCKET, plain, &got, &len);
  const size_t granted = static_cast<size_t>(got) / 2;  // the kernel reports double
  static std::atomic<bool> warned_send{false}, warned_receive{false};
  std::atomic<bool>& warned = send ? warned_send : warned_receive;
  if (granted < want && !warned.exchange(true)) {
    spdlog::warn(
        "socket {} buffer: asked for {} bytes, the kernel granted {}; as root raise the "
        "limit with: sysctl -w net.core.{}={}",
        send ? "send" : "receive", want, granted, send ? "wmem_max" : "rmem_max", want);
  }
  return granted;
}

}  // namespace tilestream
