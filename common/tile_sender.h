// One tile stream: sends a frame as RTP/RFC 4175 packets over a UDP socket,
// paced evenly over the frame interval by time (common/pacer.h): one
// wake-up and one system call per burst.
//
// Per burst: the headers of the burst's packets are written into a scratch
// area sized at creation, and each packet goes to the kernel as iovecs
// (header, pixels straight from the frame buffer, padding), so pixels are
// copied once, by the kernel. Runs of equal-sized packets become GSO
// messages, and all of a burst's go in one sendmmsg. No allocation, no
// logging in SendFrame.
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
  int64_t pacing_quantum_ns = 10'000'000;  // a burst: the packets of at most this long
  uint64_t max_burst_bytes = 512 * 1024;   // and at most this many bytes (also unpaced)
  double pacing_fraction = 0.95;           // spread a frame over this part of the interval
  double pacing_phase = 0;                 // 0..1, see Pacer::Options::phase
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

  // The same in steps, for one thread that paces several tiles
  // (streamer/tile_stream.h): BeginFrame plans the frame, NextBurstNs says
  // when its next burst is due (INT64_MIN unpaced), SendBurst sends that
  // burst (at or after then; at once when hurrying) and ends the frame with
  // its last burst or a hard socket error (whose errno it returns).
  // REQUIRES: BeginFrame only when !sending(); SendBurst only when sending().
  void BeginFrame(const std::byte* frame, uint32_t timestamp, int64_t start_ns,
                  int64_t interval_ns);
  bool sending() const { return frame_ != nullptr; }
  int64_t NextBurstNs() const { return pacer_.DueNs(next_); }
  int SendBurst(bool hurry);

  const Packetizer& packetizer() const { return packetizer_; }
  const UdpSender& socket() const { return socket_; }
  const Pacer& pacer() const { return pacer_; }
  const TileSenderStats& stats() const { return stats_; }

 private:
  TileSender(Packetizer p, UdpSender s, Clock* clock, const TileSenderOptions& o);

  // Builds the headers and iovecs of packets [first, end) into runs_.
  size_t BuildBurst(const std::byte* frame, uint32_t timestamp, uint32_t first, uint32_t end);

  Packetizer packetizer_;
  UdpSender socket_;
  Pacer pacer_;
  double fraction_;
  size_t header_stride_;
  std::vector<std::byte> headers_;  // header_stride_ per packet of a burst
  std::vector<iovec> iov_;          // 3 per packet of a burst
  std::vector<DatagramRun> runs_;   // 1 per packet of a burst at most
  TileSenderStats stats_;
  // The frame being sent (BeginFrame .. its last burst).
  const std::byte* frame_ = nullptr;
  uint32_t timestamp_ = 0, next_ = 0;
  bool late_ = false;
};

}  // namespace tilestream
