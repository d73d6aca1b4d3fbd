// Direct placement: receiving a tile stream's pixels straight into the frame
// being assembled, so the kernel's copy out of the socket is the only copy
// (docs/receiver.md, "Direct placement").
//
// A stream from our streamer follows a plan the receiver can compute (the
// Packetizer of the wall's tile, MTU and packing): packet k always carries
// the same line headers and the pixel bytes [O_k, O_k + P_k) of the frame.
// Before a receive, Prepare predicts which packets come next (those from the
// frame's high-water mark on, J per message: one GRO super-datagram) and
// lays out each message's iovecs so that packet k's header lands in a small
// slot, its pixels at frame + O_k, its RTP padding in a slot; whatever is
// beyond the prediction lands in the message's own buffer at its natural
// offset. After the receive, Resolve checks every segment against its
// prediction (size, RTP fixed bits, padding, line headers byte for byte).
//
// Safety: the kernel writes into the frame only at or beyond the high-water
// mark, where no accepted packet of that frame is. Segments in place form a
// prefix of the batch; from the first one that is not, every byte of the
// rest of the batch is gathered back to its natural offset in its message's
// buffer (as a plain receive would have it) before the caller admits
// anything, so what the caller copies can never have been overwritten by a
// copy of the same batch. A stream that does not follow the plan (a
// third-party sender, another MTU) costs that gather; after 8 batches in a
// row without a placed packet prediction is tried only every 64th batch.
//
// Memory: header and padding slots for batch x J packets, sized at
// construction; nothing allocated afterwards. Not thread-safe: one network
// thread.
#pragma once

#include <sys/uio.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/receive/frame_assembler.h"
#include "common/wire/packetizer.h"
#include "common/wire/rfc4175.h"

namespace tilestream {

struct PlacementStats {
  uint64_t placed = 0;    // packets received in place
  uint64_t gathered = 0;  // bytes gathered back after a failed prediction
};

class PacketPlacement {
 public:
  // `plan`: the sender's Packetizer. `batch` messages of `message_bytes`
  // each (UdpReceiver::kBufferSize); `gro`: messages carry several packets.
  PacketPlacement(Packetizer plan, uint32_t batch, size_t message_bytes, bool gro);

  // Lays out the iovecs of every message: message m's buffer is `buffers[m]`
  // (message_bytes each); predicted pixels go to `frame` from the packet
  // that starts at byte `high_water` on. Null frame, or no packet starts at
  // high_water: plain receives into the buffers.
  void Prepare(std::byte* frame, size_t high_water, std::span<std::byte* const> buffers);
  std::span<const iovec> message_iov(uint32_t m) const;

  // After a receive of `count` messages with these lengths and GRO segment
  // sizes (0: one datagram): decides which segments are in place and
  // gathers the rest to their natural offsets in the buffers.
  void Resolve(uint32_t count, std::span<const size_t> lengths,
               std::span<const uint16_t> segment_sizes);
  // Leading segments of message m in place, and their views (pixels in the
  // frame given to Prepare). The rest of the message, from byte
  // placed_count(m) * segment size on, is plain in buffers[m].
  uint32_t placed_count(uint32_t m) const { return placed_count_[m]; }
  const Rfc4175View& placed(uint32_t m, uint32_t j) const {
    return views_[size_t{m} * per_message_ + j];
  }

  // Hands the last Resolve's packets to `assembler` in arrival order: those
  // in place without a copy, the rest as plain datagrams from their
  // message's buffer. source(m) is message m's sender; added(AddResult) is
  // called after every packet.
  // REQUIRES: Prepare's frame and high_water came from assembler.PlacementTarget().
  template <typename Source, typename Added>
  void Admit(FrameAssembler& assembler, Source&& source, Added&& added) const {
    for (uint32_t m = 0; m < resolved_; ++m) {
      const sockaddr_storage* from = source(m);
      for (uint32_t j = 0; j < placed_count_[m]; ++j)
        added(assembler.AddParsed(placed(m, j), frame_, from));
      const size_t length = lengths_[m], segment = segment_sizes_[m] ? segment_sizes_[m] : length;
      for (size_t at = placed_count_[m] * segment; at < length; at += segment)
        added(assembler.Add({buffers_[m] + at, std::min(segment, length - at)}, from));
    }
  }

  const PlacementStats& stats() const { return stats_; }
  const Packetizer& plan() const { return plan_; }

 private:
  // Checks that segment j of message m (of packet `k`) is what the plan says.
  bool InPlace(uint32_t m, uint32_t j, uint32_t k, Rfc4175View* v) const;
  // Copies message m's bytes [from, to) out of its iovecs to their natural
  // offsets in its buffer.
  void Gather(uint32_t m, size_t from, size_t to);
  std::byte* HeaderSlot(uint32_t m, uint32_t j) {
    return headers_.data() + (size_t{m} * per_message_ + j) * header_bytes_;
  }
  std::byte* PadSlot(uint32_t m, uint32_t j) {
    return pads_.data() + (size_t{m} * per_message_ + j) * kMaxPad;
  }

  static constexpr size_t kMaxPad = 16;
  Packetizer plan_;
  size_t message_bytes_;
  size_t packet_bytes_ = 0;   // the size of every predicted packet
  uint32_t per_message_ = 1;  // packets predicted per message (J)
  size_t header_bytes_ = 0;   // the largest planned header
  std::vector<std::byte> headers_, pads_;
  std::vector<iovec> iov_;              // per message: 3 per packet + 1
  std::vector<uint32_t> iov_count_;     // per message
  std::vector<uint32_t> first_packet_;  // per message: packet index predicted first
  std::vector<uint32_t> predicted_;     // per message: packets predicted
  std::vector<std::byte*> buffers_;     // of the last Prepare
  std::byte* frame_ = nullptr;
  std::vector<uint32_t> placed_count_;
  uint32_t resolved_ = 0;        // messages of the last Resolve
  std::vector<size_t> lengths_;  // per message, of the last Resolve
  std::vector<uint16_t> segment_sizes_;
  std::vector<Rfc4175View> views_;
  uint32_t misses_ = 0, skipped_ = 0;  // batches in a row without a placed packet
  PlacementStats stats_;
};

}  // namespace tilestream
