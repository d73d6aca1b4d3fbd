#include "common/net/line_channel.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "common/net/udp_socket.h"

namespace tilestream {
namespace {

bool SetNonBlocking(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

// Try again when the socket is ready; any other error ends this connection
// only (docs/decisions.md, "A send the kernel refuses").
bool IsSoft(int err) {
  return err == EINTR || err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS || err == ENOMEM;
}

}  // namespace

Result<UniqueFd> ListenTcp(const std::string& address, uint16_t port) {
  auto a = SocketAddress::Resolve(address, port);
  if (!a.ok()) return a.status();
  UniqueFd fd(socket(a->storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) return Status::IoError("socket", errno);
  const int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd.get(), a->sockaddr_ptr(), a->length) != 0)
    return Status::IoError(fmt::format("bind {}:{}", address, port), errno);
  // The longest accept queue the kernel allows: a storm of connections
  // waits there to be accepted (and judged) instead of being dropped and
  // retried by TCP seconds later, when a display node may be among them.
  if (listen(fd.get(), SOMAXCONN) != 0) return Status::IoError("listen", errno);
  return fd;
}

Result<UniqueFd> ConnectTcp(const std::string& address, uint16_t port, int timeout_ms) {
  auto a = SocketAddress::Resolve(address, port);
  if (!a.ok()) return a.status();
  UniqueFd fd(socket(a->storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) return Status::IoError("socket", errno);
  const std::string where = fmt::format("connect {}:{}", address, port);
  if (connect(fd.get(), a->sockaddr_ptr(), a->length) != 0) {
    if (errno != EINPROGRESS) return Status::IoError(where, errno);
    pollfd p{fd.get(), POLLOUT, 0};
    const int n = poll(&p, 1, timeout_ms);
    if (n == 0) return Status::IoError(where + ": timed out");
    if (n < 0) return Status::IoError(where, errno);
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) return Status::IoError(where, err);
  }
  const int one = 1;
  setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  DetectDeadPeer(fd.get());
  return fd;
}

void DetectDeadPeer(int fd) {
  const int one = 1, idle_s = 1, probes = kDeadPeerMs / 1000 - 1, timeout_ms = kDeadPeerMs;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle_s, sizeof idle_s);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &idle_s, sizeof idle_s);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
  setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &timeout_ms, sizeof timeout_ms);
}

bool ConstantTimeEquals(std::string_view guess, std::string_view secret) {
  // Every byte of the secret is looked at, whatever the guess; the compiler
  // cannot stop early on an accumulated OR.
  unsigned char diff = guess.size() == secret.size() ? 0 : 1;
  for (size_t i = 0; i < secret.size(); ++i) {
    const char g = i < guess.size() ? guess[i] : '\0';
    diff |= static_cast<unsigned char>(g ^ secret[i]);
  }
  return diff == 0;
}

LineChannel::LineChannel(UniqueFd fd, size_t max_line)
    : fd_(std::move(fd)), reader_(max_line), max_line_(max_line) {
  if (fd_.valid()) {
    SetNonBlocking(fd_.get());
    const int one = 1;
    setsockopt(fd_.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
}

void LineChannel::Close(std::string why) {
  if (broken_) return;
  broken_ = true;
  why_ = std::move(why);
  fd_.reset();
}

bool LineChannel::Receive() {
  if (!open()) return false;
  char buf[8192];
  for (;;) {
    const ssize_t n = recv(fd_.get(), buf, sizeof buf, 0);
    if (n > 0) {
      input_.append(buf, static_cast<size_t>(n));
      // A peer may not grow our buffer past one line's limit without a "\n".
      if (reader_.Overlong(input_)) {
        Close("line too long");
        return false;
      }
      if (input_.size() > 64 * max_line_) {
        Close("peer sends faster than it is read");
        return false;
      }
      continue;
    }
    if (n == 0) {
      Close("peer closed");
      return false;
    }
    if (IsSoft(errno)) return true;
    Close(std::strerror(errno));
    return false;
  }
}

std::optional<std::string> LineChannel::NextLine() {
  std::string line;
  switch (reader_.Next(input_, &line)) {
    case LineReader::Got::kLine:
      return line;
    case LineReader::Got::kNone:
      return std::nullopt;
    case LineReader::Got::kTooLong:
      Close("line too long");
      input_.clear();
      return std::nullopt;
  }
  return std::nullopt;
}

bool LineChannel::Send(std::string_view line) {
  if (!open()) return false;
  if (output_.size() + line.size() + 1 > kMaxPendingOutput) {
    Close("peer reads too slowly");
    return false;
  }
  output_.append(line);
  output_.push_back('\n');
  return Flush();
}

bool LineChannel::Flush() {
  while (open() && !output_.empty()) {
    const ssize_t n = send(fd_.get(), output_.data(), output_.size(), MSG_NOSIGNAL);
    if (n > 0) {
      output_.erase(0, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && IsSoft(errno)) return true;
    Close(n == 0 ? "send returned 0" : std::strerror(errno));
  }
  return open();
}

}  // namespace tilestream
