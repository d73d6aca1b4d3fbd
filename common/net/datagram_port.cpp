#include "common/net/datagram_port.h"

#include <fmt/format.h>
#include <sys/uio.h>

#include <array>
#include <cerrno>

#include "common/net/udp_socket.h"

namespace tilestream {
namespace {

Result<UniqueFd> OpenUdp(const std::string& address, uint16_t port, bool connect_to) {
  auto a = SocketAddress::Resolve(address, port);
  if (!a.ok()) return a.status();
  UniqueFd fd(socket(a->storage.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) return Status::IoError("socket", errno);
  const int rc = connect_to ? connect(fd.get(), a->sockaddr_ptr(), a->length)
                            : bind(fd.get(), a->sockaddr_ptr(), a->length);
  if (rc != 0)
    return Status::IoError(
        fmt::format("{} udp {}:{}", connect_to ? "connect" : "bind", address, port), errno);
  return fd;
}

}  // namespace

Result<UniqueFd> BindUdp(const std::string& address, uint16_t port) {
  return OpenUdp(address, port, false);
}

Result<UniqueFd> ConnectUdp(const std::string& address, uint16_t port) {
  return OpenUdp(address, port, true);
}

int SendCopies(int fd, std::string_view datagram, int copies, const sockaddr_storage* to,
               socklen_t to_length) {
  constexpr int kMost = 4;
  iovec iov{const_cast<char*>(datagram.data()), datagram.size()};
  std::array<mmsghdr, kMost> m{};
  copies = std::min(copies, kMost);
  for (int i = 0; i < copies; ++i) {
    m[i].msg_hdr.msg_iov = &iov;
    m[i].msg_hdr.msg_iovlen = 1;
    m[i].msg_hdr.msg_name = const_cast<sockaddr_storage*>(to);
    m[i].msg_hdr.msg_namelen = to ? to_length : 0;
  }
  const int sent = sendmmsg(fd, m.data(), static_cast<unsigned>(copies), MSG_DONTWAIT);
  return sent < 0 ? 0 : sent;
}

}  // namespace tilestream
