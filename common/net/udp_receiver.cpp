// The GRO receiver of udp_socket.h: batches of coalesced datagrams by
// recvmmsg, the kernel's drops and queue read from the socket.
#include <arpa/inet.h>
#include <linux/sock_diag.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/net/udp_socket.h"

#ifndef UDP_GRO
#define UDP_GRO 104
#endif

namespace tilestream {
namespace {

// Joins the group `group` names, if it is one, on `interface`: a NIC's
// name, or (IPv4) its address; empty: the routing table's choice.
Status JoinGroup(int fd, const SocketAddress& group, const std::string& interface) {
  const std::string what = "join multicast group " + group.ToString() + " on " +
                           (interface.empty() ? std::string("the routed interface") : interface);
  const unsigned index = interface.empty() ? 0 : if_nametoindex(interface.c_str());
  if (group.storage.ss_family == AF_INET) {
    const auto& g = reinterpret_cast<const sockaddr_in&>(group.storage);
    if (!IN_MULTICAST(ntohl(g.sin_addr.s_addr))) return Status::Ok();
    ip_mreqn m{};
    m.imr_multiaddr = g.sin_addr;
    m.imr_ifindex = static_cast<int>(index);
    if (!interface.empty() && index == 0 &&
        inet_pton(AF_INET, interface.c_str(), &m.imr_address) != 1)
      return Status::InvalidArgument(what + ": no such interface or IPv4 address");
    if (setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof m) != 0)
      return Status::IoError(what, errno);
    return Status::Ok();
  }
  const auto& g = reinterpret_cast<const sockaddr_in6&>(group.storage);
  if (!IN6_IS_ADDR_MULTICAST(&g.sin6_addr)) return Status::Ok();
  if (!interface.empty() && index == 0)
    return Status::InvalidArgument(what + ": no such interface (IPv6 takes a name)");
  ipv6_mreq m{};
  m.ipv6mr_multiaddr = g.sin6_addr;
  m.ipv6mr_interface = index;
  if (setsockopt(fd, IPPROTO_IPV6, IPV6_JOIN_GROUP, &m, sizeof m) != 0)
    return Status::IoError(what, errno);
  return Status::Ok();
}

}  // namespace

void UdpReceiver::SetTimeoutUs(int64_t us) {
  us = std::max<int64_t>(1, us);
  if (us == timeout_us_) return;
  timeout_us_ = us;
  timeval tv{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
  setsockopt(fd_.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

void UdpReceiver::SendTo(std::span<const std::byte> datagram, const sockaddr_storage& to) {
  const socklen_t length = to.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  if (sendto(fd_.get(), datagram.data(), datagram.size(), MSG_DONTWAIT,
             reinterpret_cast<const sockaddr*>(&to), length) < 0) {
    ++stats_.feedback_errors;  // whatever the errno: the loss tracker asks again
    stats_.feedback_refusals.Add(errno, 1);
  }
}

Result<UdpReceiver> UdpReceiver::Open(const UdpReceiverOptions& o) {
  auto local = SocketAddress::Resolve(o.bind_address, o.port);
  if (!local.ok()) return local.status();
  UdpReceiver r;
  r.calls_ = o.calls;
  r.fd_.reset(socket(local->storage.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!r.fd_.valid()) return Status::IoError("socket", errno);
  r.granted_buffer_ = SetSocketBuffer(r.fd_.get(), false, o.receive_buffer);
  if (bind(r.fd_.get(), local->sockaddr_ptr(), local->length) != 0)
    return Status::IoError("bind to " + local->ToString(), errno);
  TS_RETURN_IF_ERROR(JoinGroup(r.fd_.get(), *local, o.multicast_interface));
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  getsockname(r.fd_.get(), reinterpret_cast<sockaddr*>(&bound), &len);
  r.port_ = ntohs(bound.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&bound)->sin_port
                                             : reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  if (o.gro) {
    const int on = 1;
    r.gro_ = setsockopt(r.fd_.get(), SOL_UDP, UDP_GRO, &on, sizeof on) == 0;
  }
  r.SetTimeoutUs(int64_t{o.timeout_ms} * 1000);

  const uint32_t batch = std::max<uint32_t>(1, o.batch);
  r.buffers_.resize(size_t{batch} * kBufferSize);
  r.control_.resize(size_t{batch} * kControlSize);
  r.iovs_.resize(batch);
  r.mmsgs_.resize(batch);
  r.addresses_.resize(batch);
  r.segment_size_.resize(batch);
  for (uint32_t m = 0; m < batch; ++m) {
    r.iovs_[m] = {r.buffers_.data() + size_t{m} * kBufferSize, kBufferSize};
    msghdr& h = r.mmsgs_[m].msg_hdr;
    h.msg_iov = &r.iovs_[m];
    h.msg_iovlen = 1;
    h.msg_name = &r.addresses_[m];
    h.msg_control = r.control_.data() + size_t{m} * kControlSize;
  }
  r.discards_.resize(batch);
  return r;
}

BatchResult UdpReceiver::ReceiveBatch() {
  last_count_ = 0;
  for (mmsghdr& m : mmsgs_) {
    m.msg_hdr.msg_namelen = sizeof(sockaddr_storage);
    m.msg_hdr.msg_controllen = kControlSize;
    m.msg_hdr.msg_flags = 0;
  }
  ++stats_.syscalls;
  const int n = calls_.recvmmsg(fd_.get(), mmsgs_.data(), static_cast<unsigned>(mmsgs_.size()),
                                MSG_WAITFORONE, nullptr);
  if (n < 0) {
    const int e = errno;
    if (e == EAGAIN || e == EWOULDBLOCK || e == EINTR || e == ECONNREFUSED) return {};
    return {0, {e}};
  }
  for (int m = 0; m < n; ++m) {
    msghdr& h = mmsgs_[m].msg_hdr;
    segment_size_[m] = 0;
    for (cmsghdr* c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c)) {
      if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
        int size = 0;
        std::memcpy(&size, CMSG_DATA(c), sizeof size);
        segment_size_[m] = static_cast<uint16_t>(size);
      }
    }
    if (h.msg_flags & MSG_TRUNC) {
      ++stats_.truncated;
      mmsgs_[m].msg_len = 0;  // never hand on a cut datagram
      continue;
    }
    const size_t len = mmsgs_[m].msg_len;
    const size_t seg = segment_size_[m] ? segment_size_[m] : len;
    if (len == 0) ++stats_.empty;
    stats_.datagrams += seg ? (len + seg - 1) / seg : 1;
    stats_.bytes += len;
  }
  last_count_ = n;
  return {n, {}};
}

uint32_t UdpReceiver::MemInfo(int field) const {
  uint32_t meminfo[SK_MEMINFO_VARS] = {};
  socklen_t len = sizeof meminfo;
  if (getsockopt(fd_.get(), SOL_SOCKET, SO_MEMINFO, meminfo, &len) != 0 ||
      len <= static_cast<socklen_t>(field * sizeof(uint32_t)))
    return 0;
  return meminfo[field];
}

void UdpReceiver::UpdateKernelDrops() {
  // The kernel's count only grows; 0 also when it cannot be read.
  stats_.kernel_drops = std::max<uint64_t>(stats_.kernel_drops, MemInfo(SK_MEMINFO_DROPS));
}

size_t UdpReceiver::QueuedBytes() const { return MemInfo(SK_MEMINFO_RMEM_ALLOC); }

void UdpReceiver::Discard(size_t bytes) {
  ++stats_.catch_ups;
  const uint64_t goal = stats_.discarded_bytes + bytes;
  while (stats_.discarded_bytes < goal) {
    for (mmsghdr& m : discards_) m = {};
    ++stats_.syscalls;
    const int n =
        calls_.recvmmsg(fd_.get(), discards_.data(), static_cast<unsigned>(discards_.size()),
                        MSG_DONTWAIT | MSG_TRUNC, nullptr);
    if (n <= 0) return;
    for (int m = 0; m < n; ++m) stats_.discarded_bytes += discards_[m].msg_len;
  }
}

}  // namespace tilestream
