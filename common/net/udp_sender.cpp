// The GSO sender of udp_socket.h: datagrams grouped into GSO messages,
// several per sendmmsg; refusals retried, counted and told apart.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/udp.h>
#include <sched.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>

#include "common/net/udp_socket.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

namespace tilestream {
namespace {

constexpr int kMaxNoBufferRetries = 64;

// A UDP_SEGMENT control message (the segment size, 16 bits).
constexpr size_t kGsoControlSize = CMSG_SPACE(sizeof(uint16_t));

// The kernel refuses GSO for this route or device (EINVAL: segments larger
// than the route's MTU, which may have shrunk): send datagram by datagram.
bool IsGsoRefusal(int e) { return e == EIO || e == ENOPROTOOPT || e == EOPNOTSUPP || e == EINVAL; }

}  // namespace

std::string IoStatus::message() const { return ok() ? "ok" : std::strerror(error); }

Result<UdpSender> UdpSender::Open(const UdpSenderOptions& o) {
  auto dest = SocketAddress::Resolve(o.destination, o.port);
  if (!dest.ok()) return dest.status();
  UdpSender s;
  s.fd_.reset(socket(dest->storage.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!s.fd_.valid()) return Status::IoError("socket", errno);
  s.granted_buffer_ = SetSocketBuffer(s.fd_.get(), true, o.send_buffer);
  if (!o.device.empty()) {
    if (setsockopt(s.fd_.get(), SOL_SOCKET, SO_BINDTODEVICE, o.device.c_str(),
                   static_cast<socklen_t>(o.device.size())) != 0) {
      if (errno != EPERM) return Status::IoError("SO_BINDTODEVICE " + o.device, errno);
      static std::atomic<bool> warned{false};
      if (!warned.exchange(true))
        spdlog::warn("binding to interface {} needs CAP_NET_RAW; relying on the source address",
                     o.device);
    }
  }
  if (!o.source_address.empty()) {
    auto src = SocketAddress::Resolve(o.source_address, 0);
    if (!src.ok()) return src.status();
    if (bind(s.fd_.get(), src->sockaddr_ptr(), src->length) != 0)
      return Status::IoError("bind to source address " + o.source_address, errno);
  }
  if (connect(s.fd_.get(), dest->sockaddr_ptr(), dest->length) != 0)
    return Status::IoError("connect to " + dest->ToString(), errno);
  if (o.gso) {
    // Probe the socket option; the per-send control message does the work.
    int probe = 0;
    s.gso_ = setsockopt(s.fd_.get(), SOL_UDP, UDP_SEGMENT, &probe, sizeof probe) == 0;
  }
  s.calls_ = o.calls;
  s.split_iov_.resize(size_t{o.max_iovecs} + o.max_datagrams);
  s.datagram_begin_.resize(size_t{o.max_datagrams} + 1);
  s.mmsgs_.resize(o.max_datagrams);
  s.message_first_.resize(size_t{o.max_datagrams} + 1);
  s.gso_control_.resize(size_t{o.max_datagrams} * kGsoControlSize);
  return s;
}

uint32_t UdpSender::Split(std::span<const iovec> iov, size_t datagram_size, uint32_t first) {
  uint32_t k = first, n = first == 0 ? 0 : datagram_begin_[first];
  size_t filled = 0;
  datagram_begin_[first] = n;
  for (const iovec& v : iov) {
    auto* base = static_cast<char*>(v.iov_base);
    size_t len = v.iov_len;
    while (len > 0) {
      const size_t take = std::min(len, datagram_size - filled);
      split_iov_[n++] = {base, take};
      base += take;
      len -= take;
      filled += take;
      if (filled == datagram_size) {
        datagram_begin_[++k] = n;
        filled = 0;
      }
    }
  }
  if (filled > 0) datagram_begin_[++k] = n;
  return k;
}

IoStatus UdpSender::Send(std::span<const DatagramRun> runs) {
  uint32_t datagrams = 0, messages = 0;
  for (const DatagramRun& run : runs) {
    const uint32_t first = datagrams;
    datagrams = Split(run.iov, run.datagram_size, first);
    if (gso_) messages = GroupGso(first, datagrams, run.datagram_size, messages);
  }
  if (datagrams == 0) return {};
  return gso_ ? SendMessages(0, messages) : SendMmsg(0, datagrams);
}

uint32_t UdpSender::GroupGso(uint32_t first, uint32_t end, size_t datagram_size, uint32_t m) {
  const uint32_t per_message = GsoSegmentsPerSend(datagram_size);
  for (uint32_t d = first; d < end; ++m) {
    const uint32_t group = std::min(per_message, end - d);
    msghdr& msg = mmsgs_[m].msg_hdr;
    msg = msghdr{};
    msg.msg_iov = &split_iov_[datagram_begin_[d]];
    msg.msg_iovlen = datagram_begin_[d + group] - datagram_begin_[d];
    if (group > 1) {
      msg.msg_control = gso_control_.data() + size_t{m} * kGsoControlSize;
      msg.msg_controllen = kGsoControlSize;
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_UDP;
      c->cmsg_type = UDP_SEGMENT;
      c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
      const auto size = static_cast<uint16_t>(datagram_size);
      std::memcpy(CMSG_DATA(c), &size, sizeof size);
    }
    message_first_[m] = d;
    d += group;
    message_first_[m + 1] = d;
  }
  return m;
}

IoStatus UdpSender::SendMmsg(uint32_t first, uint32_t count) {
  for (uint32_t k = first; k < first + count; ++k) {
    mmsghdr& m = mmsgs_[k];
    m.msg_hdr = msghdr{};
    m.msg_hdr.msg_iov = &split_iov_[datagram_begin_[k]];
    m.msg_hdr.msg_iovlen = datagram_begin_[k + 1] - datagram_begin_[k];
    m.msg_len = 0;
    message_first_[k] = k;
  }
  message_first_[first + count] = first + count;
  return SendMessages(first, first + count);
}

IoStatus UdpSender::SendMessages(uint32_t m, uint32_t end) {
  int retries = 0;
  // sendmmsg returns the count sent before a message the kernel refused,
  // and drops the refusal's errno: that message goes again alone, to be
  // sent or to say why not.
  bool cut = false;
  while (m < end) {
    const uint32_t ask = cut ? 1 : end - m;
    ++stats_.syscalls;
    const int n = calls_.sendmmsg(fd_.get(), &mmsgs_[m], ask, 0);
    if (n > 0) {
      if (cut) stats_.refused_resent += Datagrams(m);
      for (uint32_t k = m; k < m + static_cast<uint32_t>(n); ++k) {
        stats_.bytes += mmsgs_[k].msg_len;
        stats_.datagrams += Datagrams(k);
      }
      m += static_cast<uint32_t>(n);
      cut = static_cast<uint32_t>(n) < ask;
      retries = 0;  // each message has its own retries for a full buffer
      continue;
    }
    cut = false;
    const int e = errno;
    if (gso_ && IsGsoRefusal(e) && Datagrams(m) > 1) {
      gso_ = false;
      ++stats_.gso_fallbacks;
      return SendMmsg(message_first_[m], message_first_[end] - message_first_[m]);
    }
    switch (OnSendError(e, &retries, Datagrams(m))) {
      case ErrorAction::kRetry:
        break;
      case ErrorAction::kDropped:
        ++m;
        retries = 0;
        break;
      case ErrorAction::kHard:
        return {e};
    }
  }
  return {};
}

UdpSender::ErrorAction UdpSender::OnSendError(int e, int* retries, uint32_t datagrams) {
  switch (ClassifySendError(e)) {
    case SendErrorClass::kRetry:
      return ErrorAction::kRetry;
    case SendErrorClass::kFullBuffer:
      if ((*retries)++ < kMaxNoBufferRetries) {
        ++stats_.no_buffer;
        sched_yield();
        return ErrorAction::kRetry;
      }
      break;  // a buffer that stays full: those datagrams are refused
    case SendErrorClass::kRefused:
      break;
    case SendErrorClass::kHard:
      return ErrorAction::kHard;
  }
  stats_.refusals.Add(e, datagrams);
  stats_.dropped += datagrams;
  return ErrorAction::kDropped;
}

ssize_t UdpSender::ReceiveFeedback(std::span<std::byte> buffer) {
  const ssize_t n = calls_.recv(fd_.get(), buffer.data(), buffer.size(), MSG_DONTWAIT);
  if (n >= 0) return n;
  if (errno == EAGAIN || errno == EWOULDBLOCK) return -1;
  // An ICMP error of an earlier datagram (ECONNREFUSED, EHOSTUNREACH, ...).
  if (ClassifySendError(errno) == SendErrorClass::kRefused) {
    stats_.refusals.Add(errno, 1);
    ++stats_.dropped;
  }
  return 0;
}

}  // namespace tilestream
