// Which sender a tile accepts, from the wall config (docs/config.md): our
// streamer's stream by default (the tile's pinned SSRC, the config's
// payload type, pixels placed straight into the frame, our NIC as the only
// source), any sender's SSRC (`any_ssrc`), or the stream an SDP file
// describes (`sdp`: its SSRC, or any when it names none, and its payload
// type; its size and port must be the tile's). Setup code.
#pragma once

#include <cstdint>
#include <optional>

#include "common/base/result.h"
#include "common/wall/wall_config.h"

namespace tilestream {

struct TileSource {
  std::optional<uint32_t> ssrc;  // unset: lock onto the first sender
  uint8_t payload_type = kDefaultPayloadType;
  bool ours = true;  // our streamer's packet plan and NIC apply
};

// Reads the tile's SDP file, if it names one (relative to the config's
// directory); errors name the file and what does not fit.
Result<TileSource> ResolveTileSource(const WallConfig& config, uint32_t tile);

}  // namespace tilestream
