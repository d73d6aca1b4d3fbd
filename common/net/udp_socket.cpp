#include "common/net/udp_socket.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <linux/sock_diag.h>
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

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

namespace tilestream {
namespace {

constexpr int kMaxNoBufferRetries = 64;

// A UDP_SEGMENT control message (the segment size, 16 bits).
constexpr size_t kGsoControlSize = CMSG_SPACE(sizeof(uint16_t));

// The kernel refuses GSO for this route or device (EINVAL: segments larger
// than the route's MTU, which may have shrunk): send datagram by datagram.
bool IsGsoRefusal(int e) { return e == EIO || e == ENOPROTOOPT || e == EOPNOTSUPP || e == EINVAL; }

// Sets a socket buffer, forcing past the sysctl maximum where permitted.
// Returns what the kernel granted; warns once per process if it is less.
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

}  // namespace

// --- addresses -----------------------------------------------------------------

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

// --- sender --------------------------------------------------------------------

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

// --- receiver ------------------------------------------------------------------

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
