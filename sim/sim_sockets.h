// The programs' UDP senders (common/net/udp_socket.h) in the simulation:
// each TileSender opens its socket as the streamer does, and its system
// calls (SocketCalls: sendmmsg, and recv for the receivers' NACKs) come
// here instead of the kernel. A datagram is captured as its first bytes
// (the RTP and RFC 4175 headers, or RFC 4588's) and its size; whole,
// pixels too, where the run checks pixels or it is a retransmission.
#pragma once

#include <sys/socket.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/net/udp_socket.h"

namespace tilestream::sim {

struct Datagram {
  static constexpr size_t kHead = 96;  // RTP + RTX prefix + extended sequence + line headers
  uint32_t size = 0;
  uint32_t head_size = 0;
  std::array<std::byte, kHead> head;
  std::vector<std::byte> whole;  // empty unless captured whole
  std::span<const std::byte> bytes() const {
    return whole.empty() ? std::span<const std::byte>(head.data(), head_size)
                         : std::span<const std::byte>(whole);
  }
};

class SimSockets {
 public:
  // What a socket's sends become: the datagrams of one call, or a refusal
  // (an errno for the message, 0 to send it).
  struct Endpoint {
    std::function<int()> refuse;
    std::function<void(std::vector<Datagram>&&)> sent;
    std::deque<std::vector<std::byte>> feedback;  // what recv returns, oldest first
    bool whole = false;                           // capture pixels too
    uint8_t rtx_payload_type = 255;               // captured whole always
  };

  SimSockets();
  ~SimSockets();
  // The calls a UdpSenderOptions of the simulation uses.
  static SocketCalls Calls();
  void Attach(int fd, Endpoint endpoint) { endpoints_[fd] = std::move(endpoint); }
  void Detach(int fd) { endpoints_.erase(fd); }
  Endpoint* Find(int fd);

 private:
  static int SendMmsg(int fd, mmsghdr* messages, unsigned count, int flags);
  static ssize_t Recv(int fd, void* buffer, size_t length, int flags);
  std::unordered_map<int, Endpoint> endpoints_;
  std::vector<Datagram> scratch_;
};

}  // namespace tilestream::sim
