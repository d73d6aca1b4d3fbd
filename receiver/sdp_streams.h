// `receiver --sdp FILE...`: receive streams that SDP files describe (our
// streamer's --sdp-dir, ffmpeg's -sdp_file, or one written for a GStreamer
// rtpvrawpay sender) instead of a wall config's tiles. Each file is one
// tile, left to right on one node: geometry, port, payload type and the
// address to listen on come from its SDP, and its SSRC when it names one
// (else the tile locks onto the first sender). No swap sync: there is no
// coordinator. Setup code; not per packet.
#pragma once

#include <string>
#include <vector>

#include "common/base/result.h"
#include "common/wall/wall_config.h"
#include "common/wire/sdp.h"

namespace tilestream {

// Reads and parses each file (at most 64 KiB); errors name the file.
Result<std::vector<TileStreamDescription>> ReadSdpFiles(const std::vector<std::string>& paths);

// A one-row wall of these streams on one node "localhost" at their
// destination address, each tile naming its SDP file (receiver/tile_source.h
// reads them again). They must share one geometry and one address.
Result<WallConfig> WallConfigForStreams(const std::vector<TileStreamDescription>& streams,
                                        const std::vector<std::string>& paths);

}  // namespace tilestream
