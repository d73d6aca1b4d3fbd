// `streamer --sdp-dir DIR`: one SDP file per tile stream (DIR/tile_r0c1.sdp),
// so GStreamer, ffmpeg or our receiver's --sdp can be pointed at a tile.
// No MPI here.
#pragma once

#include <cstdint>
#include <string>

#include "common/base/result.h"
#include "common/wall/wall_config.h"
#include "common/wire/sdp.h"

namespace tilestream {

// How tile t's stream looks on the wire, as its SDP file says it.
TileStreamDescription DescribeTileStream(const WallConfig& c, uint32_t tile);

// Writes every tile's file into `dir` (made if missing); the first file
// that cannot be written is the error.
Status WriteSdpFiles(const WallConfig& c, const std::string& dir);

}  // namespace tilestream
