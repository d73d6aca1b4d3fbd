// The doorbell: how a tile rank waiting for its next tick blocks on a file
// descriptor instead of polling MPI (issue 14; docs/decisions.md).
//
// Ticks stay MPI messages. Before sending a tick, the coordinator rings
// each armed rank with a UDP datagram of 8 bytes, the tick message's
// sequence number, all of them in one sendmmsg; the rank sleeps in ppoll on
// its doorbell socket (beside its tiles' NACK sockets), wakes, drains the
// socket and probes MPI until the tick comes (streamer/tick_wait.h). Ring
// first: over Open MPI's TCP transport (spawned ranks, other servers) a
// blocking send of a tick could wait for its rank's own MPI progress; when
// the ring came after the sends, a rank asleep on its doorbell made none,
// and one send of the testbed's first armed tick waited 255 ms, until that
// rank's heartbeat, while every tile skipped six ticks. The number tells a
// ring for a tick the rank already took from one whose message is still on
// its way; nothing else is read from it, so a stray or forged datagram
// costs at most a few MPI probes.
//
// A rank on the coordinator's host listens on 127.0.0.1; one on another
// server of the wall on its own address in [mpi] network; with neither it
// has no doorbell and polls MPI as it did before. No allocation, no logging
// after Open.
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "common/base/result.h"
#include "common/base/unique_fd.h"
#include "common/wall/wall_config.h"

namespace tilestream {

// Where the doorbell of the rank streaming `tile` listens; nullopt: none.
std::optional<in_addr> DoorbellAddress(const WallConfig& c, uint32_t tile);

// The rank's side: a UDP socket bound to an address, port chosen by the kernel.
class DoorbellListener {
 public:
  static Result<DoorbellListener> Open(in_addr address);

  int fd() const { return fd_.get(); }
  in_addr address() const { return address_; }
  uint16_t port() const { return port_; }  // host byte order

  // Reads what has come, at most 64 datagrams; returns the highest
  // sequence number among them (0: none, or none well-formed).
  uint64_t Drain();

 private:
  UniqueFd fd_;
  in_addr address_{};
  uint16_t port_ = 0;
};

// The coordinator's side: one socket ringing every armed rank.
class DoorbellRinger {
 public:
  // For ranks 0 .. ranks - 1 (the world), none armed yet.
  static Result<DoorbellRinger> Open(int ranks);

  // From now on each tick to `rank` is preceded by a ring at address:port.
  void Arm(int rank, in_addr address, uint16_t port);
  bool armed(int rank) const;

  // Rings the armed ranks of 1..last in one sendmmsg (more only where the
  // kernel refuses one). A ring that fails is counted, never retried: a
  // rank that misses one takes its tick when its safety timer ends.
  void Ring(uint64_t sequence, int last);
  uint64_t failures() const { return failures_; }

 private:
  UniqueFd fd_;
  std::vector<sockaddr_in> to_;  // per rank; port 0: not armed
  std::vector<mmsghdr> messages_;
  uint64_t payload_ = 0;  // the sequence, big-endian
  iovec iov_{};
  uint64_t failures_ = 0;
};

}  // namespace tilestream
