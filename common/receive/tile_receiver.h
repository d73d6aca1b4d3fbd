// One stream received: a tile of a display node (receiver/), or a live
// source on the streaming server (issue 44, docs/live.md). A network
// thread receives the stream (UDP_GRO + recvmmsg) into a FrameAssembler,
// asks the sender for lost packets again (Generic NACKs back to where the
// stream comes from, when the assembler tracks loss: docs/receiver.md,
// "Recovering lost packets"), and hands out statistics (a copy, refreshed
// every 100 ms) and, optionally, a checksum of every complete frame for
// end-to-end checks. No allocation or logging per packet. Start/Stop from
// one thread; Snapshot from any.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "common/base/pi_mutex.h"
#include "common/base/result.h"
#include "common/base/rtt_estimate.h"
#include "common/net/udp_socket.h"
#include "common/receive/frame_assembler.h"
#include "common/receive/packet_placement.h"

namespace tilestream {

struct TileReceiverOptions {
  uint32_t tile_index = 0;
  AssemblerOptions assembler;
  UdpReceiverOptions socket;
  std::vector<SocketAddress> expected_sources;  // empty: any host
  // The sender's packet plan (our streamer's, from the wall config): pixels
  // are received straight into the frame where packets follow it
  // (common/receive/packet_placement.h). Unset: every packet is copied once more.
  std::optional<PacketizerOptions> plan;
  // Called on the network thread for every complete frame (tile, RTP
  // timestamp, checksum of its pixels); empty: no checksums are computed.
  std::function<void(uint32_t, uint32_t, uint64_t)> on_frame;
  // Called on the network thread for every complete frame (tile, RTP
  // timestamp) before a consumer can take it: the swap sync report.
  std::function<void(uint32_t, uint32_t)> on_complete;
  // The round trip to the server as the swap sync measured it: the
  // repairs' retries until they measured their own (null: none).
  const SharedRtt* rtt_hint = nullptr;
};

struct TileReceiverStats {
  AssemblerStats assembler;
  ReceiveStats socket;
  PlacementStats placement;
  LossTrackerStats loss;  // zero when retransmission is off
  // A hard receive error ended the tile's thread (the socket is unusable):
  // its errno; 0 while receiving.
  IoStatus receive_error;
};

class TileReceiver {
 public:
  static Result<std::unique_ptr<TileReceiver>> Open(TileReceiverOptions options);
  ~TileReceiver();

  void Start();
  void Stop();
  TileReceiverStats Snapshot() const;
  // For a renderer on another thread (see FrameAssembler): the newest
  // complete (or, with the partial policy, finished) frame since the last
  // call, or the frame of one RTP timestamp; valid until the next call.
  std::optional<ReadyFrame> TakeReady() { return assembler_.TakeReady(); }
  // How long after a packet is found missing it may still be asked for (a
  // frame interval and the wall's playout latency): from any thread, taken
  // up by the tile's at its next request.
  void SetRepairWindow(int64_t ns) { repair_window_ns_.store(ns, std::memory_order_relaxed); }
  // How many copies of a first request's NACK to send (the wall's
  // "nack_copies"; LossTracker::SetFirstCopies): from any thread, likewise.
  void SetFirstNackCopies(int copies) {
    first_nack_copies_.store(copies, std::memory_order_relaxed);
  }
  std::optional<ReadyFrame> TakeFrame(uint32_t timestamp, bool incomplete_ok) {
    return assembler_.TakeFrame(timestamp, incomplete_ok);
  }
  uint16_t port() const { return socket_.port(); }

 private:
  TileReceiver(TileReceiverOptions o, UdpReceiver s);
  void Loop();
  // With more queued than kBehindFrames frames (and kBehindFloorBytes),
  // the socket's queue is thrown away down to a quarter frame.
  static constexpr size_t kBehindFrames = 2, kBehindFloorBytes = size_t{32} << 20;
  void CatchUp();
  // One batch: every packet copied into the frame, or pixels received in
  // place where they can be. Not ok: a hard error, the thread ends.
  IoStatus Receive();
  IoStatus ReceivePlaced();
  void OnAdded(AddResult r);
  void Publish();
  // Retransmission: the receive timeout until the next NACK is due, the
  // time of a batch, and the NACKs due after it.
  void PrepareWait(int64_t now);
  void StampBatch();
  void AskForLost();
  // Full batches in a row that AskForLost waited out (more was queued):
  // kMaxWaitedBatches at most, so a receiver that stays behind still asks.
  static constexpr uint32_t kMaxWaitedBatches = 4;
  uint32_t waited_batches_ = 0;

  TileReceiverOptions options_;
  UdpReceiver socket_;
  FrameAssembler assembler_;
  std::atomic<int64_t> repair_window_ns_{0};  // 0: as configured
  std::atomic<int> first_nack_copies_{1};
  std::unique_ptr<PacketPlacement> placement_;
  std::vector<std::byte*> buffers_;  // the socket's message buffers
  std::vector<size_t> lengths_;      // of the last batch's messages
  std::vector<uint16_t> segments_;
  // Where the stream comes from (NACKs go there): the source of the last
  // batch's accepted packets.
  const sockaddr_storage* batch_from_ = nullptr;
  const sockaddr_storage* accepted_from_ = nullptr;
  std::optional<sockaddr_storage> sender_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  mutable PiMutex mu_;  // read by the presenter, which may be real-time
  TileReceiverStats published_;
  IoStatus error_;
};

// A fast 64-bit checksum of a frame (not cryptographic): what tests compare.
uint64_t FrameChecksum(const std::byte* pixels, size_t size);

}  // namespace tilestream
