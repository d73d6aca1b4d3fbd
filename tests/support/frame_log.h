// Test helpers for end-to-end runs: a receiver's --frame-log ("tile
// timestamp checksum" per complete frame) and the store's checksum of a
// tile's frame, to compare what arrived with what was sent.
#pragma once

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "common/receive/tile_receiver.h"
#include "common/store/tile_store.h"

namespace tilestream::testing {

// tile -> RTP timestamp -> checksum.
inline std::map<uint32_t, std::map<uint32_t, std::string>> ReadFrameLog(const std::string& path) {
  std::map<uint32_t, std::map<uint32_t, std::string>> logged;
  std::ifstream log(path);
  for (uint32_t tile, ts; log >> tile >> ts;) log >> logged[tile][ts];
  return logged;
}

// The checksum a receiver logs for frame `frame` of tile `tile` of the store.
inline std::string StoreFrameChecksum(const MovieManifest& movie, uint32_t tile, uint64_t frame) {
  std::vector<std::byte> buffer(movie.frame_stride);
  auto reader = TileReader::Open(movie, tile, false);
  if (!reader.ok() || !reader->ReadFrame(frame, buffer).ok()) return "unreadable";
  char text[17];
  snprintf(text, sizeof text, "%016llx",
           static_cast<unsigned long long>(FrameChecksum(buffer.data(), movie.tile.frame_bytes())));
  return text;
}

}  // namespace tilestream::testing
