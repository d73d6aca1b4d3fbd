// Test helper: a minimal receiver built from the common parser. It listens
// on one UDP port in a thread and keeps, per RTP timestamp, the frame being
// assembled, the bytes received, the sequence numbers and the marker, so that
// tests can check a stream end to end. Bounded: it stops by itself after
// `max_packets` or when stopped.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "common/net/udp_socket.h"
#include "common/wire/rfc4175.h"
#include "common/wire/rtcp_feedback.h"

namespace tilestream::testing {

struct CapturedFrame {
  std::vector<std::byte> pixels;
  size_t bytes = 0;
  uint32_t ssrc = 0;
  std::vector<uint32_t> sequences;  // 32-bit, in arrival order
  int markers = 0;
  uint32_t marker_sequence = 0;
};

class TileCapture {
 public:
  explicit TileCapture(TileGeometry tile, size_t max_packets = 1'000'000)
      : tile_(tile), max_(max_packets) {
    UdpReceiverOptions o;
    o.bind_address = "127.0.0.1";
    o.receive_buffer = 32 << 20;
    o.timeout_ms = 20;
    auto r = UdpReceiver::Open(o);
    if (r.ok()) receiver_ = std::make_unique<UdpReceiver>(std::move(r).value());
  }
  ~TileCapture() { Stop(); }

  bool ok() const { return receiver_ != nullptr; }
  uint16_t port() const { return receiver_->port(); }

  void Start() {
    thread_ = std::thread([this] {
      while (!stop_ && packet_count() < max_) {
        if (receiver_->ReceiveBatch().messages == 0) continue;
        std::lock_guard lock(mu_);
        receiver_->ForEachDatagram([&](std::span<const std::byte> d, const sockaddr_storage&) {
          if (LooksLikeRtcp(d)) {  // the sender's BYE when its stream ends
            ++rtcp_;
            return;
          }
          ++packets_;
          Rfc4175View v;
          if (ParseRfc4175(d, tile_, &v) != ParseError::kOk) {
            ++malformed_;
            return;
          }
          CapturedFrame& f = frames_[v.rtp.timestamp];
          if (f.pixels.empty()) f.pixels.resize(tile_.frame_bytes());
          f.bytes += CopySegmentsToFrame(v, tile_, f.pixels);
          f.ssrc = v.rtp.ssrc;
          f.sequences.push_back(v.sequence32());
          if (v.rtp.marker) {
            ++f.markers;
            f.marker_sequence = v.sequence32();
          }
        });
      }
    });
  }

  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

  // Frames seen so far; safe while running.
  size_t frame_count() {
    std::lock_guard lock(mu_);
    return frames_.size();
  }

  // Datagrams received so far; safe while running.
  size_t packet_count() {
    std::lock_guard lock(mu_);
    return packets_;
  }

  // REQUIRES: stopped.
  const std::map<uint32_t, CapturedFrame>& frames() const { return frames_; }
  size_t malformed() const { return malformed_; }
  size_t rtcp() const { return rtcp_; }

 private:
  TileGeometry tile_;
  size_t max_;
  std::unique_ptr<UdpReceiver> receiver_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::map<uint32_t, CapturedFrame> frames_;
  size_t packets_ = 0;
  size_t malformed_ = 0;
  size_t rtcp_ = 0;
};

}  // namespace tilestream::testing
