// One tile stream: sends a frame as RTP/RFC 4175 packets over a UDP socket,
// paced evenly over the frame interval by time (common/send/pacer.h): one
// wake-up and one system call per burst.
//
// Per burst: the headers of the burst's packets are written into a scratch
// area sized at creation, and each packet goes to the kernel as iovecs
// (header, pixels straight from the frame buffer, padding), so pixels are
// copied once, by the kernel. Runs of equal-sized packets become GSO
// messages, and all of a burst's go in one sendmmsg. No allocation, no
// logging in SendFrame.
//
// Retransmission (docs/protocol.md, "Retransmission"): the sender keeps the
// frame being sent and the history_frames - 1 before it retrievable (views
// into the frame buffers: the caller keeps them valid, see
// ForgetFramesFrom), and
// AnswerFeedback answers the receiver's Generic NACKs with RFC 4588
// packets built like any burst (headers in scratch, pixels straight from
// the frame), capped at a share of the bytes sent.
//
// Not thread-safe: one sender per thread.
#pragma once

#include <sys/uio.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "common/base/result.h"
#include "common/net/udp_socket.h"
#include "common/send/pacer.h"
#include "common/wire/packetizer.h"
#include "common/wire/rtcp_feedback.h"

namespace tilestream {

struct TileSenderOptions {
  PacketizerOptions packetizer;
  UdpSenderOptions socket;
  bool pacing = true;
  int64_t pacing_quantum_ns = 10'000'000;  // a burst: the packets of at most this long
  uint64_t max_burst_bytes = 512 << 10;    // and at most this many bytes (also unpaced)
  double pacing_fraction = 0.95;           // spread a frame over this part of the interval
  double pacing_phase = 0;                 // 0..1, see Pacer::Options::phase
  bool retransmission = false;             // answer NACKs
  uint32_t history_frames = 3;             // retrievable, the one being sent included (3..32)
  double retransmission_share = 0.05;      // of the bytes sent, at most
  uint8_t rtx_payload_type = 97;
  uint32_t rtx_ssrc = 0;
};

struct TileSenderStats {
  uint64_t frames = 0;
  uint64_t late_frames = 0;  // the next tick came before the frame was out
  uint64_t sequence = 0;     // next RTP sequence number (32 bits used)
  // Retransmission:
  uint64_t nacks = 0;          // feedback datagrams with a NACK for this stream
  uint64_t requested = 0;      // sequence numbers they asked for
  uint64_t retransmitted = 0;  // packets sent again
  uint64_t retransmitted_bytes = 0;
  uint64_t refused_old = 0;         // not a packet of the frames still retrievable
  uint64_t refused_cap = 0;         // over the cap
  uint64_t borrowed = 0;            // of retransmitted: answered on credit (a burst)
  uint64_t feedback_malformed = 0;  // datagrams that were not RTCP, or broken
};

class TileSender {
 public:
  static Result<std::unique_ptr<TileSender>> Create(const TileSenderOptions& options, Clock* clock);

  // Sends one frame: `frame` holds tile.frame_bytes() pixels. Paced over
  // [start_ns, start_ns + fraction * interval_ns). `hurry` is asked between
  // bursts; once it returns true the rest of the frame goes unpaced (the
  // next tick is already due). Not ok: a hard socket error.
  IoStatus SendFrame(const std::byte* frame, uint32_t timestamp, int64_t start_ns,
                     int64_t interval_ns, const std::function<bool()>& hurry);

  // The same in steps, for one thread that paces several tiles
  // (streamer/tile_stream.h): BeginFrame plans the frame, NextBurstNs says
  // when its next burst is due (INT64_MIN unpaced), SendBurst sends that
  // burst (at or after then; at once when hurrying) and ends the frame with
  // its last burst or a hard socket error (which it returns). A datagram the
  // kernel refuses costs that datagram only (counted in socket().stats(),
  // repaired like any loss): the frame goes on with its own sequence
  // numbers. A hard error (the socket can never send again,
  // common/net/send_errors.h) ends the sender: BeginFrame does nothing
  // after it and ended() says why.
  // REQUIRES: BeginFrame only when !sending(); SendBurst only when sending().
  void BeginFrame(const std::byte* frame, uint32_t timestamp, int64_t start_ns,
                  int64_t interval_ns);
  bool sending() const { return frame_ != nullptr; }
  const IoStatus& ended() const { return ended_; }  // ok while it may send
  int64_t NextBurstNs() const { return pacer_.DueNs(next_); }
  IoStatus SendBurst(bool hurry);

  // Sends from a new socket from now on (the stream moves to another NIC:
  // streamer/tile_stream.h); the counters go on. Between bursts only. On
  // error the old socket stays.
  Status MoveSocket(UdpSenderOptions options);

  // Answers what the receiver sent back (Generic NACKs): reads the
  // socket without blocking, retransmits what was asked for and may be.
  // No allocation. REQUIRES: options.retransmission.
  void AnswerFeedback();
  // The stream ends (the show does): an RTCP BYE, twice (one may be lost),
  // so that a receiver asks for a lost tail of the last frame, which no
  // later packet reveals (common/receive/frame_assembler.h). Answer NACKs
  // for a while after. A refused BYE is counted like any refused send.
  void EndStream();
  // The frames begun `n` or more frames before the last one are no longer
  // valid (their buffers went back to the ring): not retransmitted.
  void ForgetFramesFrom(size_t n) {
    for (size_t h = n; h < history_.size(); ++h) history_[h] = {};
  }
  void ForgetOlderFrames() { ForgetFramesFrom(1); }

  const Packetizer& packetizer() const { return packetizer_; }
  const UdpSender& socket() const { return socket_; }
  const Pacer& pacer() const { return pacer_; }
  const TileSenderStats& stats() const { return stats_; }

 private:
  TileSender(Packetizer p, UdpSender s, Clock* clock, const TileSenderOptions& o);

  // Builds the headers and iovecs of packets [first, end) into runs_.
  std::span<const DatagramRun> BuildBurst(const std::byte* frame, uint32_t timestamp,
                                          uint32_t first, uint32_t end);

  // A frame that may be asked for again.
  struct SentFrame {
    const std::byte* pixels = nullptr;
    uint32_t timestamp = 0;
    uint32_t first_sequence = 0;
  };
  struct Resend {
    const SentFrame* frame;
    uint32_t packet;
  };
  void AnswerNacks(std::span<const std::byte> datagram);
  void Retransmit(uint16_t sequence);
  void FlushRetransmissions();

  Packetizer packetizer_;
  UdpSender socket_;
  uint32_t max_datagrams_ = 0, max_iovecs_ = 0;  // the socket's, as Create sized them
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
  IoStatus ended_;
  // Retransmission.
  double share_, budget_ = 0, budget_max_ = 0;  // bytes; budget_ down to -budget_max_
  uint8_t rtx_payload_type_;
  uint32_t rtx_ssrc_;
  uint16_t rtx_sequence_ = 0;
  std::vector<SentFrame> history_;      // the frame last begun, then the ones before
  std::vector<Resend> resends_;         // queued, up to kMaxResends
  std::vector<std::byte> rtx_headers_;  // per resend: the RTX prefix, then the original's headers
  std::vector<iovec> rtx_iov_;          // 4 per resend
  std::vector<DatagramRun> rtx_runs_;
  std::vector<NackRequest> nacks_;
  std::vector<std::byte> feedback_;  // one datagram
};

}  // namespace tilestream
