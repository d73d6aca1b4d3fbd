// One tile stream: sends a frame as RTP/RFC 4175 packets over a UDP socket,
// paced evenly over the frame interval.
//
// Per burst: the headers of the burst's packets are written into a scratch
// area sized at creation, and each packet goes to the kernel as iovecs
// (header, pixels straight from the frame buffer, padding), so pixels are
// copied once, by the kernel. Equal-sized packets of a burst go in one UDP
// GSO send. No allocation, no logging in SendFrame.
//
// Not thread-safe: one sender per thread.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "common/pacer.h"
#include "common/packetizer.h"
#include "common/result.h"
#include "common/udp_socket.h"

namespace tilestream {

struct TileSenderOptions {
  PacketizerOptions packetizer;
  UdpSenderOptions socket;
  bool pacing = true;
  uint32_t burst_packets = 0;   // paced: packets released together; 0: one GSO send
  double pacing_fraction = 0.95;  // spread a frame over this part of the interval
};

struct TileSenderStats {
  uint64_t frames = 0;
  uint64_t late_frames = 0;  // the next tick came before the frame was out
  uint64_t sequence = 0;     // next RTP sequence number (32 bits used)
};

class TileSender {
 public:
  static Result<std::unique_ptr<TileSender>> Create(const TileSenderOptions& options, Clock* clock);

  // Sends one frame: `frame` holds tile.frame_bytes() pixels. Paced over
  // [start_ns, start_ns + fraction * interval_ns). `hurry` is asked between
  // bursts; once it returns true the rest of the frame goes unpaced (the
  // next tick is already due). Returns 0 or the errno of a hard socket
  // error.
  int SendFrame(const std::byte* frame, uint32_t timestamp, int64_t start_ns, int64_t interval_ns,
                const std::function<bool()>& hurry);

  const Packetizer& packetizer() const { return packetizer_; }
  const UdpSender& socket() const { return socket_; }
  const Pacer& pacer() const { return pacer_; }
  const TileSenderStats& stats() const { return stats_; }

 private:
  TileSender(Packetizer p, UdpSender s, Clock* clock, const TileSenderOptions& o);

  Packetizer packetizer_;
  UdpSender socket_;
  Pacer pacer_;
  uint32_t burst_;
  double fraction_;
  size_t header_stride_;
  std::vector<std::byte> headers_;
  std::vector<iovec> iov_;
  TileSenderStats stats_;
};

}  // namespace tilestream
