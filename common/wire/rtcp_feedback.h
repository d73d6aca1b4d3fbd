// RTCP transport feedback for retransmission (docs/protocol.md,
// "Retransmission"): the Generic NACK of RFC 4585 (PT 205, FMT 1), by which
// a receiver asks the sender for lost packets again, and the BYE (RFC 3550
// 6.6, PT 203) by which a sender says its stream ends, so that a receiver
// asks for the lost tail of the last frame (no later packet shows it).
//
// A Generic NACK names lost sequence numbers as FCI entries: a packet id
// (PID) and a bitmask of the 16 following (BLP). Receivers send it
// reduced-size (RFC 5506: the NACK alone, `a=rtcp-rsize` in the SDP) on the
// stream's own socket (RFC 5761 multiplexing, `a=rtcp-mux`); the parser also
// takes compound packets (SR/RR/SDES before it) and skips every other RTCP
// packet in them.
//
// Untrusted input: every length is checked against the datagram; nothing
// is allocated or logged. Thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace tilestream {

inline constexpr uint8_t kRtcpTransportFeedback = 205;
inline constexpr uint8_t kGenericNackFormat = 1;
inline constexpr size_t kNackHeaderSize = 12;  // RTCP header + sender and media SSRC
inline constexpr size_t kNackEntrySize = 4;

// RFC 5761 section 4: a datagram on a multiplexed port is RTCP when its
// second byte (RTP's marker and payload type) is 192..223.
bool LooksLikeRtcp(std::span<const std::byte> datagram);

inline constexpr uint8_t kRtcpBye = 203;
inline constexpr size_t kByeSize = 8;  // RTCP header + one SSRC

// A reduced-size BYE for `ssrc`. REQUIRES: out.size() >= kByeSize. Returns
// kByeSize.
size_t WriteBye(uint32_t ssrc, std::span<std::byte> out);
// Whether an RTCP datagram (compound or reduced-size, checked as
// ParseGenericNacks checks it) holds a BYE naming `ssrc`.
bool SaysBye(std::span<const std::byte> datagram, uint32_t ssrc);

// One FCI entry: `pid` and those of the 16 after it whose bit is set in `blp`.
struct NackEntry {
  uint16_t pid = 0;
  uint16_t blp = 0;
};

// Writes one Generic NACK asking for `lost` (16-bit sequence numbers in
// ascending order, modulo 2^16) as few entries as they pack into. Stops
// before the entry that would not fit `out`; *taken says how many of `lost`
// went in. Returns the packet's size, 0 if not even one entry fits.
size_t WriteGenericNack(uint32_t sender_ssrc, uint32_t media_ssrc, std::span<const uint16_t> lost,
                        std::span<std::byte> out, size_t* taken);

enum class RtcpError : uint8_t {
  kOk = 0,
  kTooShort = 1,  // less than an RTCP header, or a NACK without its SSRCs
  kBadVersion = 2,
  kBadLength = 3,  // a packet's length field runs past the datagram
  kCount = 4,
};
const char* RtcpErrorName(RtcpError e);

struct NackRequest {
  uint32_t media_ssrc = 0;
  NackEntry entry;
};

// The Generic NACK entries in one RTCP datagram (compound or reduced-size),
// in order, up to out.size() (*count: how many; the rest are dropped).
// Other RTCP packets are skipped. Stops at the first malformed packet and
// returns why (entries before it are kept).
RtcpError ParseGenericNacks(std::span<const std::byte> datagram, std::span<NackRequest> out,
                            size_t* count);

// Calls visit(uint16_t sequence) for every sequence number `e` asks for.
template <typename F>
void ForEachNacked(const NackEntry& e, F&& visit) {
  visit(e.pid);
  for (int bit = 0; bit < 16; ++bit)
    if (e.blp & (1u << bit)) visit(static_cast<uint16_t>(e.pid + bit + 1));
}

}  // namespace tilestream
