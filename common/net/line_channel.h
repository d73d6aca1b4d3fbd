// Line-oriented TCP, the transport of the control channel and swap sync
// (docs/control.md): a listener, a connect with a timeout, and LineChannel,
// which splits what a peer sends into lines and queues what we send so a
// slow peer never blocks us.
//
// Limits: a line is at most max_line bytes (kMaxLineBytes unless the owner
// says; a longer one is an error that ends the connection, never a crash or
// an unbounded buffer), at most 64 lines' worth is buffered unread; at most
// kMaxPendingOutput bytes wait to be sent (beyond, the peer is too slow and
// the connection is ended). Sockets are non-blocking with TCP_NODELAY.
// A LineChannel is not thread-safe: one thread, or a lock around it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/base/result.h"
#include "common/base/unique_fd.h"
#include "common/net/line_reader.h"

namespace tilestream {

inline constexpr size_t kMaxLineBytes = 4096;
inline constexpr size_t kMaxPendingOutput = size_t{1} << 20;

// A non-blocking listening socket on address:port (IPv4 or IPv6 literal,
// "localhost", or a wildcard), SO_REUSEADDR set.
Result<UniqueFd> ListenTcp(const std::string& address, uint16_t port);

// A connected, non-blocking socket (DetectDeadPeer set); fails after timeout_ms.
Result<UniqueFd> ConnectTcp(const std::string& address, uint16_t port, int timeout_ms);

// A peer whose link died silently (a cable, a switch port: no FIN, no RST
// ever comes) is given up after about kDeadPeerMs: data it leaves
// unacknowledged that long (TCP_USER_TIMEOUT), or, while idle, keepalive
// probes once a second that go unanswered, end the connection with
// ETIMEDOUT. Linux's defaults would wait some 15 minutes and 2 hours.
inline constexpr int kDeadPeerMs = 3000;
void DetectDeadPeer(int fd);

// Whether `guess` equals `secret`, in a time that depends on the secret's
// length only, not on where a guess first differs (no timing oracle for
// the control token).
bool ConstantTimeEquals(std::string_view guess, std::string_view secret);

class LineChannel {
 public:
  LineChannel() = default;
  explicit LineChannel(UniqueFd fd, size_t max_line = kMaxLineBytes);

  int fd() const { return fd_.get(); }
  bool open() const { return fd_.valid() && !broken_; }
  // Why the channel closed ("peer closed", "line too long", an errno text).
  const std::string& why() const { return why_; }

  // Reads what the socket has. False once the peer closed or broke a limit.
  bool Receive();
  // The next whole line, without its end (common/net/line_reader.h);
  // nullopt when none.
  std::optional<std::string> NextLine();

  // Queues `line` and a "\n" and sends what the socket takes now. False once
  // the channel is broken (the line is dropped).
  bool Send(std::string_view line);
  // Sends what is queued; false once broken.
  bool Flush();
  bool wants_write() const { return !output_.empty(); }

  void Close(std::string why);

 private:
  UniqueFd fd_;
  std::string input_, output_;
  LineReader reader_{kMaxLineBytes};
  size_t max_line_ = kMaxLineBytes;
  bool broken_ = false;
  std::string why_;
};

}  // namespace tilestream
