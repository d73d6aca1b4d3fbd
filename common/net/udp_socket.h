// UDP sockets for tile streams.
//
// UdpSender: connected to one receiver, bound to a source address and
// optionally an interface (SO_BINDTODEVICE). Send() takes runs of datagrams,
// each of one size (its last may be shorter) as a list of iovecs, and hands
// them all to the kernel in one sendmmsg: with UDP GSO (UDP_SEGMENT) one
// message per GSO send (up to 64 datagrams, 64 KB); where the kernel or
// device refuses GSO, one message per datagram from then on. A message the
// kernel refuses (common/net/send_errors.h: a firewall's EPERM, a receiver
// gone, a route down, a buffer that stays full) costs its datagrams only:
// they are counted by errno and the rest of the call is sent.
//
// UdpReceiver: bound to an address and port, UDP_GRO on, recvmmsg into
// buffers sized at Open; coalesced GRO buffers are split back into datagrams.
//
// Socket buffers: the requested size is set with SO_*BUFFORCE where
// permitted (root), else SO_*BUF; if the kernel grants less, one warning per
// process names the sysctl to raise.
//
// Both are movable (buffers stay where they are), not copyable, and used by
// one thread. Send() and ReceiveBatch() allocate nothing and log nothing:
// they return an IoStatus, and a hard error is the caller's to report once.
// Their system calls go through SocketCalls, the seam by which a test makes
// the kernel refuse (GSO, a broken socket).
//
// In three rooms: udp_socket.cpp (addresses, socket buffers),
// udp_sender.cpp, udp_receiver.cpp.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "common/base/unique_fd.h"
#include "common/net/send_errors.h"

namespace tilestream {

// The largest UDP payload and GSO segment count one send may carry.
inline constexpr size_t kMaxUdpPayload = 65507;
inline constexpr uint32_t kMaxGsoSegments = 64;

// Datagrams of `datagram_size` bytes in one GSO send (one GRO message at the
// receiver): 7 of 8,972 bytes at MTU 9000.
constexpr uint32_t GsoSegmentsPerSend(size_t datagram_size) {
  return static_cast<uint32_t>(
      std::clamp<size_t>(kMaxUdpPayload / std::max<size_t>(datagram_size, 1), 1, kMaxGsoSegments));
}

struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;

  // A numeric IPv4/IPv6 address or a host name (resolved once, here).
  static Result<SocketAddress> Resolve(const std::string& host, uint16_t port);
  std::string ToString() const;
  bool SameHost(const sockaddr_storage& other) const;
  const sockaddr* sockaddr_ptr() const { return reinterpret_cast<const sockaddr*>(&storage); }
};

// Sets a socket buffer, forcing past the sysctl maximum where permitted.
// Returns what the kernel granted; warns once per process if it is less.
size_t SetSocketBuffer(int fd, bool send, size_t want);

// The outcome of a socket call on a hot path: ok, or the errno of a hard
// error (the socket can never send again). Refusals of single messages (a
// firewall, a full buffer, a receiver or route gone) and signals are
// counted in the stats and are not errors here.
struct IoStatus {
  int error = 0;
  bool ok() const { return error == 0; }
  std::string message() const;  // strerror's text; "ok" when ok
};

// What ReceiveBatch did: the messages received (each one datagram, or
// several coalesced by GRO; 0 on timeout or a soft error), or a hard error.
struct BatchResult {
  int messages = 0;
  IoStatus status;
};

// The system calls of the hot paths. Tests swap them to make the kernel
// refuse what this machine's kernel accepts.
struct SocketCalls {
  int (*sendmmsg)(int fd, mmsghdr* messages, unsigned count, int flags) = ::sendmmsg;
  int (*recvmmsg)(int fd, mmsghdr* messages, unsigned count, int flags,
                  timespec* timeout) = ::recvmmsg;
  // The sender's feedback (UdpSender::ReceiveFeedback); the wall's
  // simulation (sim/) swaps all three for its network.
  ssize_t (*recv)(int fd, void* buffer, size_t length, int flags) = ::recv;
};

struct SendStats {
  uint64_t datagrams = 0;
  uint64_t bytes = 0;
  uint64_t syscalls = 0;
  uint64_t no_buffer = 0;  // ENOBUFS/EAGAIN: retried
  uint64_t dropped = 0;    // all datagrams given up: refusals.total()
  RefusalCounts refusals;  // the datagrams given up, by errno
  // Refused inside a batch, where sendmmsg gives no errno, and sent when
  // tried again alone (a refusal that did not last: a random drop).
  uint64_t refused_resent = 0;
  uint64_t gso_fallbacks = 0;
};

// A run of datagrams for UdpSender::Send: the bytes of `iov` cut into
// datagrams of `datagram_size`, the last one shorter if the total is not a
// multiple.
struct DatagramRun {
  std::span<const iovec> iov;
  size_t datagram_size = 0;
};

struct UdpSenderOptions {
  std::string destination;
  uint16_t port = 0;
  std::string source_address;  // bind to this address first; empty: any
  std::string device;          // SO_BINDTODEVICE; empty: none
  size_t send_buffer = 4718592;
  bool gso = true;
  uint32_t max_datagrams = 256;  // most datagrams one Send() takes, all runs together
  uint32_t max_iovecs = 1024;    // most iovecs one Send() takes, all runs together
  SocketCalls calls;
};

class UdpSender {
 public:
  static Result<UdpSender> Open(const UdpSenderOptions& options);

  // Sends the runs, in order, in one system call where nothing fails.
  // Not ok: a hard error (EBADF, EMSGSIZE, ...) that the caller reports once.
  // REQUIRES: 0 < datagram_size <= kMaxUdpPayload for each run; the iovecs
  //           and datagrams of all runs within max_iovecs, max_datagrams.
  IoStatus Send(std::span<const DatagramRun> runs);
  IoStatus Send(std::span<const iovec> iov, size_t datagram_size) {
    const DatagramRun run{iov, datagram_size};
    return Send({&run, 1});
  }

  // What the receiver sent back on this (connected) socket: RTCP feedback.
  // Returns the datagram's length; 0 for an ICMP error taken off the socket
  // (counted as one datagram refused by its errno); -1 when there is nothing.
  // Never blocks.
  ssize_t ReceiveFeedback(std::span<std::byte> buffer);
  bool gso() const { return gso_; }
  // Counting goes on from `old`'s stats (a stream moved to another socket).
  void CarryStatsFrom(const UdpSender& old) { stats_ = old.stats_; }
  size_t granted_send_buffer() const { return granted_buffer_; }
  const SendStats& stats() const { return stats_; }
  int fd() const { return fd_.get(); }

 private:
  UdpSender() = default;
  // Splits iov at datagram boundaries into split_iov_/datagram_begin_ from
  // datagram `first` on; returns the datagram count after it.
  uint32_t Split(std::span<const iovec> iov, size_t datagram_size, uint32_t first);
  // Datagrams [first, end), of one size, as GSO messages from message m on;
  // returns the message count after them.
  uint32_t GroupGso(uint32_t first, uint32_t end, size_t datagram_size, uint32_t m);
  // Datagrams [first, first + count) as a message each, sent.
  IoStatus SendMmsg(uint32_t first, uint32_t count);
  // Messages [m, end) prepared in mmsgs_/message_first_, sent.
  IoStatus SendMessages(uint32_t m, uint32_t end);
  uint32_t Datagrams(uint32_t m) const { return message_first_[m + 1] - message_first_[m]; }
  // Counts a failed send of `datagrams` datagrams and says what follows
  // (common/send_errors.h): EINTR and a full buffer (a bounded number of
  // times) retry, a refusal or a buffer that stays full drops them, a hard
  // error ends the call.
  enum class ErrorAction { kRetry, kDropped, kHard };
  ErrorAction OnSendError(int e, int* retries, uint32_t datagrams);

  UniqueFd fd_;
  SocketCalls calls_;
  bool gso_ = false;
  size_t granted_buffer_ = 0;
  SendStats stats_;
  std::vector<iovec> split_iov_;
  std::vector<uint32_t> datagram_begin_;  // datagram k: split_iov_[begin[k], begin[k+1])
  std::vector<mmsghdr> mmsgs_;
  std::vector<uint32_t> message_first_;  // GSO message m: datagrams [first[m], first[m+1])
  std::vector<std::byte> gso_control_;   // a UDP_SEGMENT control message per GSO message
};

struct UdpReceiverOptions {
  // A multicast group's address: bound to it and the group joined on
  // multicast_interface (a NIC's name, or for IPv4 its address; empty: the
  // interface the routing table names for the group).
  std::string bind_address = "0.0.0.0";
  std::string multicast_interface;
  uint16_t port = 0;  // 0: any free port (tests); see port()
  size_t receive_buffer = 67108864;
  bool gro = true;
  uint32_t batch = 32;   // messages per recvmmsg
  int timeout_ms = 100;  // ReceiveBatch returns 0 after this long idle
  SocketCalls calls;
};

struct ReceiveStats {
  uint64_t datagrams = 0;
  uint64_t bytes = 0;
  uint64_t syscalls = 0;
  uint64_t truncated = 0;  // MSG_TRUNC: datagram larger than the buffer
  uint64_t empty = 0;      // zero-length datagrams (in datagrams; never handed on)
  // Dropped by the kernel with the socket buffer full (see UpdateKernelDrops):
  // a GSO message of many datagrams counts once.
  uint64_t kernel_drops = 0;
  uint64_t feedback_errors = 0;     // SendTo failures, each costing that datagram only
  RefusalCounts feedback_refusals;  // the same, by errno
  // Discard: the times a receiver far behind threw away what was queued,
  // and the bytes (as datagrams carry them) it threw away unread.
  uint64_t catch_ups = 0;
  uint64_t discarded_bytes = 0;
};

class UdpReceiver {
 public:
  static Result<UdpReceiver> Open(const UdpReceiverOptions& options);

  // Waits up to timeout_ms for datagrams and receives a batch.
  BatchResult ReceiveBatch();

  // Calls visit(std::span<const std::byte> datagram, const sockaddr_storage& from)
  // for every datagram of the last batch, in arrival order.
  template <typename F>
  void ForEachDatagram(F&& visit) const {
    for (int m = 0; m < last_count_; ++m) {
      const std::byte* p = buffers_.data() + size_t(m) * kBufferSize;
      size_t left = mmsgs_[m].msg_len;
      const size_t seg = segment_size_[m] ? segment_size_[m] : left;
      while (left > 0) {
        const size_t n = left < seg ? left : seg;
        visit(std::span<const std::byte>(p, n), addresses_[m]);
        p += n;
        left -= n;
      }
    }
  }

  // Scatter receive (see PacketPlacement): message m of the next batches
  // goes to `iov` (the caller's, valid until ResetMessageIov) instead of
  // message_buffer(m). Its bytes are then not where ForEachDatagram looks.
  void SetMessageIov(uint32_t m, std::span<const iovec> iov) {
    mmsgs_[m].msg_hdr.msg_iov = const_cast<iovec*>(iov.data());
    mmsgs_[m].msg_hdr.msg_iovlen = iov.size();
  }
  void ResetMessageIov(uint32_t m) {
    mmsgs_[m].msg_hdr.msg_iov = &iovs_[m];
    mmsgs_[m].msg_hdr.msg_iovlen = 1;
  }
  uint32_t batch() const { return static_cast<uint32_t>(mmsgs_.size()); }
  std::byte* message_buffer(uint32_t m) { return buffers_.data() + size_t{m} * kBufferSize; }
  // Of the last batch: its messages, each one's length, GRO segment size
  // (0: one datagram) and sender.
  int last_count() const { return last_count_; }
  size_t message_length(uint32_t m) const { return mmsgs_[m].msg_len; }
  uint16_t segment_size(uint32_t m) const { return segment_size_[m]; }
  const sockaddr_storage& message_source(uint32_t m) const { return addresses_[m]; }

  // Waits this long at most in the next ReceiveBatch calls (microseconds,
  // >= 1); a system call only when it changes.
  void SetTimeoutUs(int64_t us);
  // Sends one datagram back (RTCP feedback to the stream's sender), never
  // blocking; a failure is counted (stats().feedback_errors), not fatal.
  void SendTo(std::span<const std::byte> datagram, const sockaddr_storage& to);

  static constexpr size_t kBufferSize = 65536;  // one GRO super-datagram
  uint16_t port() const { return port_; }
  bool gro() const { return gro_; }
  size_t granted_receive_buffer() const { return granted_buffer_; }
  const ReceiveStats& stats() const { return stats_; }
  int fd() const { return fd_.get(); }
  // Reads the socket's drop count into stats().kernel_drops (one syscall,
  // SO_MEMINFO: call it when reporting, not per batch).
  void UpdateKernelDrops();
  // What waits in the socket's receive queue, as the kernel charges it
  // against the buffer (SO_MEMINFO's rmem_alloc: payload and overhead).
  // While a reader keeps up with a busy socket UDP gives memory back in
  // lumps, so this can overstate the queue by up to half of
  // granted_receive_buffer(). One system call.
  size_t QueuedBytes() const;
  // Catching up: receives and throws away, oldest first and without
  // copying them (MSG_TRUNC into empty buffers), about `bytes` of what
  // waits (a batch more at most; less if the queue empties). Never
  // blocks; counted in stats() (catch_ups, discarded_bytes).
  void Discard(size_t bytes);

 private:
  static constexpr size_t kControlSize = 64;
  UdpReceiver() = default;
  // One SK_MEMINFO_* field of the socket (SO_MEMINFO); 0 if unreadable.
  uint32_t MemInfo(int field) const;

  UniqueFd fd_;
  SocketCalls calls_;
  uint16_t port_ = 0;
  bool gro_ = false;
  size_t granted_buffer_ = 0;
  int last_count_ = 0;
  int64_t timeout_us_ = 0;
  ReceiveStats stats_;
  std::vector<std::byte> buffers_;
  std::vector<std::byte> control_;
  std::vector<iovec> iovs_;
  std::vector<mmsghdr> mmsgs_;
  std::vector<sockaddr_storage> addresses_;
  std::vector<uint16_t> segment_size_;
  std::vector<mmsghdr> discards_;  // Discard's: no buffers at all
};

}  // namespace tilestream
