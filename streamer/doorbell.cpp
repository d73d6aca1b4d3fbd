#include "streamer/doorbell.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <ifaddrs.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "common/wall/ipv4_subnet.h"

namespace tilestream {
namespace {

// This host's address inside [mpi] network, if it has one.
std::optional<in_addr> LocalAddressIn(const std::string& network) {
  const std::optional<Ipv4Subnet> subnet = Ipv4Subnet::Parse(network);
  ifaddrs* list = nullptr;
  if (!subnet || getifaddrs(&list) != 0) return std::nullopt;
  std::optional<in_addr> found;
  for (const ifaddrs* a = list; a && !found; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
    const in_addr address = reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr;
    if (subnet->Contains(ntohl(address.s_addr))) found = address;
  }
  freeifaddrs(list);
  return found;
}

}  // namespace

std::optional<in_addr> DoorbellAddress(const WallConfig& c, uint32_t tile) {
  // The coordinator runs on the first server (streamer/placement.h).
  if (!c.several_servers() || c.routes[tile].server == 0) return in_addr{htonl(INADDR_LOOPBACK)};
  return LocalAddressIn(c.mpi.network);
}

Result<DoorbellListener> DoorbellListener::Open(in_addr address) {
  DoorbellListener d;
  d.fd_.reset(socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_addr = address;
  socklen_t length = sizeof at;
  if (!d.fd_.valid() || bind(d.fd_.get(), reinterpret_cast<sockaddr*>(&at), sizeof at) != 0 ||
      getsockname(d.fd_.get(), reinterpret_cast<sockaddr*>(&at), &length) != 0)
    return Status::Internal(std::string("doorbell socket: ") + std::strerror(errno));
  d.address_ = address;
  d.port_ = ntohs(at.sin_port);
  return d;
}

uint64_t DoorbellListener::Drain() {
  uint64_t highest = 0, sequence = 0;
  for (int n = 0; n < 64; ++n) {
    const ssize_t got = recv(fd_.get(), &sequence, sizeof sequence, MSG_DONTWAIT | MSG_TRUNC);
    if (got < 0) break;
    if (got == sizeof sequence) highest = std::max(highest, be64toh(sequence));
  }
  return highest;
}

Result<DoorbellRinger> DoorbellRinger::Open(int ranks) {
  DoorbellRinger r;
  r.fd_.reset(socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!r.fd_.valid())
    return Status::Internal(std::string("doorbell socket: ") + std::strerror(errno));
  const size_t n = static_cast<size_t>(ranks > 0 ? ranks : 1);
  r.to_.assign(n, sockaddr_in{});
  r.messages_.resize(n);
  return r;
}

void DoorbellRinger::Arm(int rank, in_addr address, uint16_t port) {
  if (rank <= 0 || static_cast<size_t>(rank) >= to_.size()) return;
  sockaddr_in& to = to_[static_cast<size_t>(rank)];
  to.sin_family = AF_INET;
  to.sin_addr = address;
  to.sin_port = htons(port);
}

bool DoorbellRinger::armed(int rank) const {
  return rank > 0 && static_cast<size_t>(rank) < to_.size() &&
         to_[static_cast<size_t>(rank)].sin_port != 0;
}

void DoorbellRinger::Ring(uint64_t sequence, int last) {
  payload_ = htobe64(sequence);
  iov_ = {&payload_, sizeof payload_};
  unsigned count = 0;
  for (int rank = 1; rank <= last && static_cast<size_t>(rank) < to_.size(); ++rank) {
    if (!armed(rank)) continue;
    msghdr& m = messages_[count++].msg_hdr;
    m = msghdr{};
    m.msg_name = &to_[static_cast<size_t>(rank)];
    m.msg_namelen = sizeof(sockaddr_in);
    m.msg_iov = &iov_;
    m.msg_iovlen = 1;
  }
  for (unsigned sent = 0; sent < count;) {
    const int n = sendmmsg(fd_.get(), messages_.data() + sent, count - sent, 0);
    if (n > 0) {
      sent += static_cast<unsigned>(n);
    } else {  // this one failed (no buffer, no route): the others still ring
      ++failures_;
      ++sent;
    }
  }
}

}  // namespace tilestream
