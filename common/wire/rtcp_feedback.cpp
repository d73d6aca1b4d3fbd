#include "common/wire/rtcp_feedback.h"

#include "common/base/bytes.h"

namespace tilestream {

bool LooksLikeRtcp(std::span<const std::byte> datagram) {
  if (datagram.size() < 2) return false;
  const auto type = static_cast<uint8_t>(datagram[1]);
  return type >= 192 && type <= 223;
}

size_t WriteGenericNack(uint32_t sender_ssrc, uint32_t media_ssrc, std::span<const uint16_t> lost,
                        std::span<std::byte> out, size_t* taken) {
  *taken = 0;
  size_t size = kNackHeaderSize;
  while (*taken < lost.size() && size + kNackEntrySize <= out.size()) {
    NackEntry e{lost[*taken], 0};
    size_t i = *taken + 1;
    for (; i < lost.size(); ++i) {
      const auto bit = static_cast<uint16_t>(lost[i] - e.pid - 1);
      if (bit >= 16) break;
      e.blp = static_cast<uint16_t>(e.blp | (1u << bit));
    }
    StoreBE16(out.data() + size, e.pid);
    StoreBE16(out.data() + size + 2, e.blp);
    size += kNackEntrySize;
    *taken = i;
  }
  if (*taken == 0) return 0;
  out[0] = std::byte(0x80 | kGenericNackFormat);  // V=2, P=0, FMT
  out[1] = std::byte(kRtcpTransportFeedback);
  StoreBE16(out.data() + 2, static_cast<uint16_t>(size / 4 - 1));
  StoreBE32(out.data() + 4, sender_ssrc);
  StoreBE32(out.data() + 8, media_ssrc);
  return size;
}

size_t WriteBye(uint32_t ssrc, std::span<std::byte> out) {
  out[0] = std::byte(0x81);  // V=2, P=0, SC=1
  out[1] = std::byte(kRtcpBye);
  StoreBE16(out.data() + 2, kByeSize / 4 - 1);
  StoreBE32(out.data() + 4, ssrc);
  return kByeSize;
}

namespace {

// Calls visit(packet) for each RTCP packet of a datagram, each at least its
// 4-byte header and within the datagram; stops at the first malformed one.
template <typename F>
RtcpError ForEachRtcpPacket(std::span<const std::byte> datagram, F&& visit) {
  size_t pos = 0;
  while (pos < datagram.size()) {
    if (datagram.size() - pos < 4) return RtcpError::kTooShort;
    const std::byte* p = datagram.data() + pos;
    if ((static_cast<uint8_t>(p[0]) >> 6) != 2) return RtcpError::kBadVersion;
    const size_t length = (size_t{LoadBE16(p + 2)} + 1) * 4;
    if (length > datagram.size() - pos) return RtcpError::kBadLength;
    pos += length;
    if (const RtcpError e = visit(std::span<const std::byte>(p, length)); e != RtcpError::kOk)
      return e;
  }
  return RtcpError::kOk;
}

}  // namespace

bool SaysBye(std::span<const std::byte> datagram, uint32_t ssrc) {
  bool bye = false;
  ForEachRtcpPacket(datagram, [&](std::span<const std::byte> p) {
    if (static_cast<uint8_t>(p[1]) != kRtcpBye) return RtcpError::kOk;
    const size_t sources = static_cast<uint8_t>(p[0]) & 0x1f;
    for (size_t i = 0; i < sources && 8 + 4 * i <= p.size(); ++i)
      bye = bye || LoadBE32(p.data() + 4 + 4 * i) == ssrc;
    return RtcpError::kOk;
  });
  return bye;
}

const char* RtcpErrorName(RtcpError e) {
  switch (e) {
    case RtcpError::kOk:
      return "ok";
    case RtcpError::kTooShort:
      return "too_short";
    case RtcpError::kBadVersion:
      return "bad_version";
    case RtcpError::kBadLength:
      return "bad_length";
    case RtcpError::kCount:
      break;
  }
  return "unknown";
}

RtcpError ParseGenericNacks(std::span<const std::byte> datagram, std::span<NackRequest> out,
                            size_t* count) {
  *count = 0;
  return ForEachRtcpPacket(datagram, [&](std::span<const std::byte> packet) {
    const std::byte* p = packet.data();
    const size_t length = packet.size();
    if (static_cast<uint8_t>(p[1]) != kRtcpTransportFeedback ||
        (static_cast<uint8_t>(p[0]) & 0x1f) != kGenericNackFormat)
      return RtcpError::kOk;
    if (length < kNackHeaderSize) return RtcpError::kTooShort;
    const uint32_t media_ssrc = LoadBE32(p + 8);
    for (size_t at = kNackHeaderSize; at + kNackEntrySize <= length && *count < out.size();
         at += kNackEntrySize) {
      out[(*count)++] = {media_ssrc, {LoadBE16(p + at), LoadBE16(p + at + 2)}};
    }
    return RtcpError::kOk;
  });
}

}  // namespace tilestream
