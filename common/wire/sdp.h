// SDP (RFC 8866) description of one tile stream, so a third-party RFC 4175
// receiver (GStreamer, ffmpeg, Wireshark) can be pointed at a tile, and a
// small reader that recovers the stream's geometry from such a file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/base/result.h"
#include "common/wire/rfc4175.h"

namespace tilestream {

struct TileStreamDescription {
  std::string name;            // session name, e.g. "tilestream r0c1"
  std::string source_address;  // origin; "0.0.0.0" when unknown
  std::string destination_address;
  uint16_t port = 0;
  uint8_t payload_type = kDefaultPayloadType;
  TileGeometry tile;  // its sampling too: RGB, or YCbCr 4:2:2 of a live source
  std::string colorimetry = "BT709";
  double fps = 0;  // 0 leaves exactframerate out
  uint32_t ssrc = 0;
  bool packed = true;  // lines split across packets: ST 2110-20 general packing
  // Retransmission (RFC 4588, docs/protocol.md): 0 when the stream has none;
  // else the RTX payload type and SSRC, and how long packets stay
  // retrievable. Written as the AVPF profile with NACK feedback, RTCP
  // multiplexed on the stream's port (RFC 5761) and reduced-size (RFC 5506).
  uint8_t rtx_payload_type = 0;
  uint32_t rtx_ssrc = 0;
  uint32_t rtx_time_ms = 0;
};

std::string WriteSdp(const TileStreamDescription& d);

// RFC 4175's fmtp names of a sampling ("RGB", "YCbCr-4:2:2") and its depth.
std::string_view SamplingName(Sampling s);
int SamplingDepth(Sampling s);

// Reads what WriteSdp writes (and the equivalent from other tools): the
// first video media's port and first payload type, the connection address,
// the raw/90000 fmtp geometry and colorimetry, and the retransmission
// payload type whose apt names the video's (RFC 4588; 0 without one).
// Fails unless the sampling is RGB at 8 bits or YCbCr-4:2:2 at 8 or 10
// (then of an even width).
Result<TileStreamDescription> ParseSdp(std::string_view text);

// Reads and parses the SDP file at `path` (at most 64 KiB), which must name
// the video's port; errors name the file.
Result<TileStreamDescription> ReadSdpFile(const std::string& path);

}  // namespace tilestream
