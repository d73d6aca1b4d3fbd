#include "sim/sim_sockets.h"

#include <netinet/udp.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tilestream::sim {

namespace {
thread_local SimSockets* current = nullptr;

// The GSO segment size a message asks for (UDP_SEGMENT), 0 for none.
size_t SegmentSize(const msghdr& m) {
  if (m.msg_controllen == 0) return 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(const_cast<msghdr*>(&m)); c;
       c = CMSG_NXTHDR(const_cast<msghdr*>(&m), c)) {
    if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_SEGMENT) {
      uint16_t size = 0;
      std::memcpy(&size, CMSG_DATA(c), sizeof size);
      return size;
    }
  }
  return 0;
}

// Cuts one message into its datagrams, each captured as far as asked.
void Capture(const msghdr& m, const SimSockets::Endpoint& e, std::vector<Datagram>* out) {
  size_t total = 0;
  for (size_t i = 0; i < m.msg_iovlen; ++i) total += m.msg_iov[i].iov_len;
  size_t segment = SegmentSize(m);
  if (segment == 0) segment = total;
  size_t iov = 0, in_iov = 0;
  for (size_t done = 0; done < total;) {
    Datagram& d = out->emplace_back();
    d.size = static_cast<uint32_t>(std::min(segment, total - done));
    size_t left = d.size, at = 0;
    while (left > 0) {
      const iovec& v = m.msg_iov[iov];
      const size_t n = std::min(left, v.iov_len - in_iov);
      const auto* from = static_cast<const std::byte*>(v.iov_base) + in_iov;
      if (at < Datagram::kHead) {
        const size_t h = std::min(n, Datagram::kHead - at);
        std::memcpy(d.head.data() + at, from, h);
        d.head_size = static_cast<uint32_t>(at + h);
      }
      const bool rtx =
          d.head_size >= 2 && (static_cast<uint8_t>(d.head[1]) & 0x7f) == e.rtx_payload_type;
      if (e.whole || rtx) {
        if (d.whole.empty()) d.whole.reserve(d.size);
        d.whole.insert(d.whole.end(), from, from + n);
      }
      at += n;
      left -= n;
      in_iov += n;
      if (in_iov == v.iov_len) {
        ++iov;
        in_iov = 0;
      }
    }
    done += d.size;
  }
}
}  // namespace

SimSockets::SimSockets() { current = this; }
SimSockets::~SimSockets() { current = nullptr; }

SocketCalls SimSockets::Calls() {
  SocketCalls c;
  c.sendmmsg = &SimSockets::SendMmsg;
  c.recv = &SimSockets::Recv;
  return c;
}

SimSockets::Endpoint* SimSockets::Find(int fd) {
  const auto it = endpoints_.find(fd);
  return it == endpoints_.end() ? nullptr : &it->second;
}

int SimSockets::SendMmsg(int fd, mmsghdr* messages, unsigned count, int /*flags*/) {
  Endpoint* e = current ? current->Find(fd) : nullptr;
  if (!e) {
    errno = EBADF;
    return -1;
  }
  std::vector<Datagram>& out = current->scratch_;
  out.clear();
  unsigned sent = 0;
  for (; sent < count; ++sent) {
    if (const int refused = e->refuse ? e->refuse() : 0; refused != 0) {
      if (sent == 0) {
        errno = refused;
        return -1;
      }
      break;
    }
    const size_t before = out.size();
    Capture(messages[sent].msg_hdr, *e, &out);
    size_t bytes = 0;
    for (size_t d = before; d < out.size(); ++d) bytes += out[d].size;
    messages[sent].msg_len = static_cast<unsigned>(bytes);
  }
  if (!out.empty()) e->sent(std::move(out));
  out.clear();
  return static_cast<int>(sent);
}

ssize_t SimSockets::Recv(int fd, void* buffer, size_t length, int /*flags*/) {
  Endpoint* e = current ? current->Find(fd) : nullptr;
  if (!e || e->feedback.empty()) {
    errno = EAGAIN;
    return -1;
  }
  const std::vector<std::byte> d = std::move(e->feedback.front());
  e->feedback.pop_front();
  const size_t n = std::min(length, d.size());
  std::memcpy(buffer, d.data(), n);
  return static_cast<ssize_t>(n);
}

}  // namespace tilestream::sim
