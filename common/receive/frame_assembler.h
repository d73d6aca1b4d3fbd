// Frame assembly for one tile on the receiving side: RTP/RFC 4175 packets
// in, whole frames out, with exact accounting of what the network did.
//
// Packets are validated (ParseRfc4175) and filtered (payload type, expected
// SSRC, expected source) before a single pixel is written. A 32-bit sequence
// count is built from the 16-bit RTP sequence (GStreamer writes 0 in RFC
// 4175's extended sequence field), so gaps (lost), late arrivals (reordered)
// and repeats (duplicate) are counted exactly within a window of 1024
// packets.
//
// The sequence is validated as RFC 3550 appendix A.1 does it, so packets
// that carry the tile's SSRC but not its stream (spoofed, or a stray second
// sender) are refused instead of ending frames and counting as loss: a new
// stream is believed after two packets in sequence of one frame (probation,
// the same RTP timestamp: a stranger's random timestamps never pair); a jump of
// kMaxDropout or more, forwards or more than the window backwards, is held
// until the packet after it follows it (the sender restarted), else refused;
// and a packet with a new timestamp may end the frame only if it is ahead
// in sequence and its timestamp is at most kMaxTimestampAdvance ahead, and,
// unless it is the very next in sequence, once the packet after it follows
// it (one stranger's packet never ends a frame). A refused packet changes
// no state: it neither moves the sequence nor counts as lost. Held packets
// are kept (copied; four of 64 KiB allocated once) and admitted first once
// believed, so a real stream loses nothing to the checks.
// See docs/receiver.md.
//
// A frame is the packets of one RTP timestamp. It ends at its marker packet
// or, when the marker was lost, at the first packet of a newer timestamp. A
// frame with every pixel byte present is complete and becomes the ready
// frame; an incomplete one is dropped (the previous picture is held) unless
// the policy shows partial frames. Complete means every pixel covered by an
// accepted packet (common/receive/coverage_map.h), not the pixel bytes adding up: a
// sender that repeats a region under fresh sequence numbers must not pass
// off a frame with a hole as complete. Packets of an older timestamp arriving
// after a newer frame started are late: counted, never written.
//
// Memory: four held packets (256 KiB) and queue_depth + 2 frame buffers
// (five by default) allocated at construction: one assembling, up to
// queue_depth finished frames queued for the consumer (a swap-synced receiver
// holds a frame until the wall releases its tick, while the next ones
// arrive), and the one the consumer holds; and the coverage bitmap of the
// assembling frame (one bit per pixel). Add() never allocates and never
// logs. One network thread calls Add; TakeReady/TakeFrame may be called
// from another thread (a renderer): the hand-off takes a lock once per
// frame, never per packet.
//
// The class in three rooms: frame_assembler.cpp (a packet admitted, its
// pixels written, a retransmission placed), frame_sequence.cpp (the
// sequence, loss, the held packets), frame_queue.cpp (the frame buffers,
// the queue handed on, the frames in repair).
#pragma once

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "common/base/pi_mutex.h"
#include "common/base/zeroed_buffer.h"
#include "common/net/udp_socket.h"
#include "common/receive/coverage_map.h"
#include "common/receive/loss_tracker.h"
#include "common/wire/packetizer.h"
#include "common/wire/rfc4175.h"

namespace tilestream {

enum class AddResult : uint8_t {
  kOk = 0,
  kMalformed = 1,  // see ParseError
  kForeignSsrc = 2,
  kForeignSource = 3,
  kDuplicate = 4,
  kLate = 5,  // belongs to a frame already finished
  kWrongPayloadType = 6,
  kProbation = 7,               // a new stream's first packet, held until the next follows it
  kSequenceJump = 8,            // beyond the dropout limit: held until the next follows it
  kTimestampOutOfSequence = 9,  // a new timestamp from a packet not in sequence
  kRtcp = 10,                   // the sender's RTCP (RFC 5761 multiplexing): a BYE acted on
};

struct AssemblerStats {
  uint64_t packets = 0;    // accepted into a frame
  uint64_t bytes = 0;      // pixel bytes written
  uint64_t lost = 0;       // sequence numbers never seen (gaps)
  uint64_t reordered = 0;  // arrived after a higher sequence number
  uint64_t duplicate = 0;
  uint64_t late = 0;
  uint64_t foreign_ssrc = 0;
  uint64_t foreign_source = 0;
  // Refused by the sequence rules (never written, never counted as lost);
  // a held packet admitted later is taken off its count.
  uint64_t wrong_payload_type = 0;
  uint64_t probation = 0;
  uint64_t sequence_jump = 0;
  uint64_t timestamp_out_of_sequence = 0;
  uint64_t byes = 0;  // RTCP BYEs of the stream: its sender ended it
  std::array<uint64_t, static_cast<size_t>(ParseError::kCount)> malformed{};
  uint64_t frames_complete = 0;
  uint64_t frames_incomplete = 0;
  // Retransmission (RFC 4588, see AssemblerOptions::rtx_payload_type):
  uint64_t retransmitted = 0;    // retransmission packets received (valid)
  uint64_t recovered = 0;        // of them, written into a frame still being assembled or repaired
  uint64_t retransmit_late = 0;  // of them, not wanted: its frame gone, or not missing
  uint64_t frames_repaired =
      0;  // complete thanks to retransmitted packets (also in frames_complete)
  // A stream of another size than the tile: frames that ended at their
  // marker short of the tile's right or bottom edge (also incomplete), and
  // how far what arrives reaches (packets beyond the tile are malformed
  // line_beyond_height or segment_beyond_width, and widen this too).
  uint64_t frames_wrong_geometry = 0;
  TileGeometry arriving;

  uint64_t malformed_total() const {
    uint64_t n = 0;
    for (uint64_t m : malformed) n += m;
    return n;
  }
};

// At most so many frames held for repair at once: a tile's 12 MB each.
inline constexpr size_t kMaxRepairFrames = 8;

struct AssemblerOptions {
  TileGeometry tile;
  // Accept only this SSRC. Unset: lock onto the first one seen, and onto a
  // new one after 1000 packets in a row of it (a restarted third-party sender).
  std::optional<uint32_t> ssrc;
  // Accept only this RTP payload type; unset: any.
  std::optional<uint8_t> payload_type;
  bool show_partial = false;  // publish incomplete frames instead of holding
  // Finished frames kept for the consumer (1..32): a swap-synced receiver
  // needs as many as arrive between a frame and the release of its tick.
  size_t queue_depth = 3;
  // The frame buffers' pages written at construction, so that no frame
  // takes their page faults while the stream runs (a receiver's first
  // frames, on a loaded machine, came late enough to leave tiles out).
  // Off: the kernel zeroes a page when a frame first writes it (the
  // wall's simulation, which writes none at the reference wall's scale).
  bool prefault = true;
  // Retransmission on (docs/receiver.md, "Recovering lost packets"):
  // packets of this payload type are RFC 4588 retransmissions; lost
  // packets are tracked for NACKs (loss()), and a frame that ends
  // incomplete is kept for repair until `repair_frames` newer frames have
  // ended (a frame buffer each). Unset: off. Not with show_partial.
  std::optional<uint8_t> rtx_payload_type;
  LossTracker::Options loss;
  size_t repair_frames = 1;  // 1 to kMaxRepairFrames
};

struct ReadyFrame {
  const std::byte* pixels = nullptr;  // tile.frame_bytes()
  uint32_t timestamp = 0;
  bool complete = false;
};

class FrameAssembler {
 public:
  // RFC 3550 A.1's MAX_DROPOUT: a jump ahead this big or bigger is a new
  // stream or a stranger, not loss. 3000 is the RFC's; it is two frames of a
  // 2560x1600 tile at MTU 9000.
  static constexpr uint64_t kMaxDropout = 3000;
  // A new frame's timestamp at most this far (10 s at 90 kHz) ahead of the
  // last one's.
  static constexpr int32_t kMaxTimestampAdvance = 10 * 90000;

  explicit FrameAssembler(const AssemblerOptions& options);

  // `from`, if given, must be the host set by ExpectSource (any port).
  AddResult Add(std::span<const std::byte> packet, const sockaddr_storage* from = nullptr);

  // Direct placement (common/receive/packet_placement.h): where packets that come
  // next may be received straight into. `frame` is the buffer the next
  // accepted packet is written to; no accepted packet of the frame being
  // assembled reaches at or beyond byte `high_water` of it, so the kernel
  // may write there without harming it. Null frame: do not place (partial
  // frames start as a copy of the previous picture).
  struct Placement {
    std::byte* frame = nullptr;
    size_t high_water = 0;
  };
  Placement PlacementTarget() {
    if (options_.show_partial) return {};
    return {buffers_[assembling_].data(), have_frame_ ? high_water_ : 0};
  }
  // Add for a packet parsed by the caller. Its pixels (v.pixels) may lie in
  // `placed_in`, a frame from PlacementTarget, at their place: then nothing
  // is copied if the packet goes to that frame.
  // REQUIRES: v came from ParseRfc4175 against this tile, or matches a
  // Packetizer plan of it.
  AddResult AddParsed(const Rfc4175View& v, const std::byte* placed_in,
                      const sockaddr_storage* from);
  // Packets only from these hosts (the streaming server's NICs: a tile
  // moves to another NIC while its own is down); up to kMaxSources, the
  // rest ignored. Any host when none is given.
  static constexpr size_t kMaxSources = 16;
  void ExpectSources(std::span<const SocketAddress> sources) {
    sources_count_ = std::min(sources.size(), kMaxSources);
    std::copy_n(sources.begin(), sources_count_, sources_.begin());
  }

  // A retransmission (RFC 4588) of a packet found missing: its pixels go to
  // the frame of its timestamp if that frame is still assembling or
  // waiting for repair. kOk when written (the repaired frame may have
  // finished: just_finished()), kLate when no longer wanted.
  AddResult AddRetransmission(std::span<const std::byte> packet,
                              const sockaddr_storage* from = nullptr);
  bool is_retransmission(std::span<const std::byte> packet) const {
    return options_.rtx_payload_type && packet.size() >= 2 &&
           (static_cast<uint8_t>(packet[1]) & 0x7f) == *options_.rtx_payload_type;
  }
  // Our streamer's plan (retransmission on): `plan` (which must outlive
  // the assembler) says where in its frame a packet is, so that what a gap
  // in sequence cannot show is asked for too: the first packets of a frame
  // a stream starts with, and, when the sender says BYE (RTCP, the show's
  // end), the packets after the newest of the frame being assembled (a
  // lost tail of the last frame, which no later packet reveals). Null: off.
  void ExpectPlan(const Packetizer* plan) { plan_ = plan; }
  // Missing packets and when to ask for them; null when retransmission is off.
  LossTracker* loss() { return loss_.get(); }
  const LossTracker* loss() const { return loss_.get(); }
  // The stream's SSRC (configured, or locked onto), if any yet.
  std::optional<uint32_t> ssrc() const { return ssrc_; }

  // The frame the last Add finished and queued, or null: for the network
  // thread to look at (checksum, report) before the consumer may take it.
  const ReadyFrame* just_finished() const { return has_just_finished_ ? &just_finished_ : nullptr; }

  // The newest finished frame, once (older queued ones are dropped);
  // nullopt if none since the last call. Valid until the next Take.
  std::optional<ReadyFrame> TakeReady();
  // The queued frame of RTP timestamp `timestamp` (older ones are dropped);
  // an incomplete one only if `incomplete_ok`. Valid until the next Take.
  std::optional<ReadyFrame> TakeFrame(uint32_t timestamp, bool incomplete_ok);

  const AssemblerStats& stats() const { return stats_; }

 private:
  static constexpr uint32_t kWindow = 1024;  // sequence numbers remembered

  // Signed distance between RTP timestamps, modulo 2^32.
  static int32_t TimestampDelta(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b); }
  // Where a packet's pixels start in the frame (bytes).
  static size_t FirstPixelByte(const Rfc4175View& v, const TileGeometry& tile) {
    const LineHeader first = LoadLineHeader(v.line_headers.data());
    return tile.PixelByte(size_t{first.line} * tile.width + first.offset);
  }
  // The pgroups of a frame: what its coverage counts.
  static size_t Pgroups(const TileGeometry& tile) {
    return size_t{tile.width} * tile.height / tile.pgroup_pixels();
  }

  // Where a packet's sequence number puts it.
  enum class Order : uint8_t { kAhead, kBehind, kDuplicate, kProbation, kJump, kNewStream };
  struct SequenceVerdict {
    Order order;
    uint64_t extended = 0;  // kAhead, kBehind: its extended sequence
    int held = -1;          // kNewStream: the held packet it follows
  };
  // Why a packet is held: until the next one follows it.
  enum class HeldAs : uint8_t { kProbation, kJump, kNewFrame };
  struct Held {
    bool valid = false;
    HeldAs as = HeldAs::kProbation;
    Rfc4175View view;  // spans into held_bytes_
  };
  static constexpr size_t kHeldSlots = 4;
  static constexpr size_t kMaxHeldBytes = 65536;  // a UDP payload's headers and pixels
  using HeldSlots = std::array<Held, kHeldSlots>;
  SequenceVerdict JudgeSequence(uint16_t sequence, uint32_t timestamp) const;
  void CommitSequence(const SequenceVerdict& v);
  // Sequence numbers (max_sequence_, ext) were never seen: lost.
  void MarkLostBefore(uint64_t ext);
  AddResult AddRtcp(std::span<const std::byte> packet);
  bool WriteToRepair(const Rfc4175View& v);
  // The sender ended its stream: the rest of the assembling frame's plan
  // after its newest packet is lost.
  void MarkTailLost();
  // What a packet's timestamp means for the frame being assembled.
  enum class Stamp : uint8_t { kSameFrame, kNewFrame, kLate, kRefused };
  Stamp JudgeTimestamp(uint32_t ts, Order order) const;
  // The held packet (`as`) that a packet of this sequence and timestamp
  // follows, or -1.
  int FollowsHeld(HeldAs as, uint16_t sequence, uint32_t timestamp) const;
  uint64_t& HeldCount(HeldAs as);
  AddResult Hold(const Rfc4175View& v, HeldAs as);
  void AdmitHeldFollowers();
  AddResult AdmitNewStream(int held, const Rfc4175View& v, const std::byte* placed_in);
  AddResult AdmitNewFrame(const Rfc4175View& v, const SequenceVerdict& order,
                          const std::byte* placed_in);
  void AdmitOtherHeld(const HeldSlots& candidates, int except);
  AddResult Admit(const Rfc4175View& v, const std::byte* placed_in);
  AddResult Write(const Rfc4175View& v, const std::byte* placed_in);
  void Finish(bool by_marker);  // the assembling frame is done
  // Where a packet's 16-bit sequence number lies, nearest the highest seen.
  uint64_t Extend(uint16_t sequence) const;
  // Marks an accepted packet's pixels in `coverage`; widens `reach` (bytes)
  // and `extent` to them.
  void Mark(const Rfc4175View& v, CoverageMap& coverage, size_t* reach, TileGeometry* extent);
  // Queues buffer `buffer` as a finished frame (a full queue drops its
  // oldest). REQUIRES: handoff_mu_ held, as for FreeBuffer.
  void Enqueue(int buffer, uint32_t timestamp, bool complete);
  int FreeBuffer() const;
  struct Repair;
  void ParkForRepair();
  void EndRepair(Repair& r, bool complete);
  void NoteBeyondTile(std::span<const std::byte> packet);
  void PopQueue(size_t n);  // drops the n oldest queued frames
  void StartFrame(uint32_t timestamp);
  void ResetSequence() {
    have_sequence_ = false;
    for (Held& h : held_) h.valid = false;
  }

  AssemblerOptions options_;
  AssemblerStats stats_;
  struct Queued {
    int buffer;
    ReadyFrame info;
  };

  // Indices into buffers_. handoff_mu_ guards consumer_, queue_ and
  // queued_ (assembling_ is the network thread's alone).
  PiMutex handoff_mu_;                 // the presenter may be real-time
  std::vector<ZeroedBuffer> buffers_;  // queue_depth + 2 (+ repair_frames)
  int assembling_ = 0, consumer_ = -1;
  std::vector<Queued> queue_;  // queue_depth, oldest first
  size_t queued_ = 0;
  bool taken_any_ = false;  // TakeReady's last frame
  uint32_t last_taken_ = 0;
  ReadyFrame just_finished_;  // the network thread's copy
  bool has_just_finished_ = false;
  bool have_frame_ = false;  // assembling a frame
  uint32_t timestamp_ = 0;   // of the assembling frame
  CoverageMap coverage_;     // of the assembling frame
  size_t high_water_ = 0;    // end of the furthest pixels written into it
  TileGeometry extent_;      // how far its packets reach
  bool have_finished_ = false;
  uint32_t finished_timestamp_ = 0;  // the newest finished frame
  // Sequence tracking (RFC 3550 appendix A.1).
  bool have_sequence_ = false;  // a stream is believed
  uint64_t max_sequence_ = 0;   // extended
  std::vector<uint64_t> seen_;  // bitmap of the last kWindow sequence numbers
  // Packets held (on probation, after a jump, or a new frame after a gap),
  // a few so that a stranger's packets in between cannot push a real
  // stream's out: the next one in sequence after one of them admits it.
  HeldSlots held_{};
  // A new frame's packet may be held (Hold kNewFrame): AdmitHeldFollowers
  // looks; false, the hot path skips it.
  bool new_frame_held_ = false;
  std::vector<std::byte> held_bytes_;  // kMaxHeld per slot
  size_t next_held_ = 0;
  // Retransmission: the missing packets, and the frames that ended
  // incomplete, each kept until it is whole or repair_frames newer frames
  // have ended.
  std::unique_ptr<LossTracker> loss_;
  // ExpectPlan: where the newest packet's pixels start; open until the
  // tail after it is marked lost.
  const Packetizer* plan_ = nullptr;
  bool tail_open_ = false;
  size_t newest_offset_ = 0;
  // With the plan: the sequence number of the first packet of the frame
  // being assembled (or last finished), lost or not.
  uint64_t frame_first_sequence_ = 0;
  struct Repair {
    bool valid = false;
    int buffer = -1;
    uint32_t timestamp = 0;
    size_t reach = 0;  // bytes, as high_water_
    CoverageMap coverage{0};
    uint64_t first_sequence = 0;  // of its frame (with the plan)
    uint64_t parked_at = 0;       // frames_ended_ when it was parked
  };
  std::vector<Repair> repairs_;  // repair_frames
  uint64_t frames_ended_ = 0;
  // Whether `from` may send this stream (ExpectSources).
  bool Foreign(const sockaddr_storage* from) const {
    if (sources_count_ == 0 || !from) return false;
    for (size_t i = 0; i < sources_count_; ++i)
      if (sources_[i].SameHost(*from)) return false;
    return true;
  }
  std::array<SocketAddress, kMaxSources> sources_{};
  size_t sources_count_ = 0;
  std::optional<uint32_t> ssrc_;  // configured, or locked onto the first seen
  uint32_t foreign_streak_ = 0;   // foreign-SSRC packets in a row
};

}  // namespace tilestream
