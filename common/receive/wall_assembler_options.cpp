#include "common/receive/wall_assembler_options.h"

#include <cmath>

namespace tilestream {

AssemblerOptions WallAssemblerOptions(const WallConfig& c, uint32_t tile, bool synced,
                                      bool retransmission) {
  AssemblerOptions ao;
  ao.tile = c.wall.tile;
  ao.ssrc = TileSsrc(tile);
  ao.payload_type = c.stream.payload_type;
  ao.show_partial = synced && c.sync.partial;
  if (synced) ao.queue_depth = c.sync.queue_frames(c.wall.fps);
  if (retransmission) {
    ao.rtx_payload_type = c.stream.rtx_payload_type;
    // A frame can be shown until its tick's latency has passed (the
    // assembler gives it up sooner when the next frame ends).
    ao.loss.window_ns =
        static_cast<int64_t>(1e9 / c.wall.fps) + (synced ? c.sync.latency_bound_ns() : 0);
    ao.loss.reorder_ns = static_cast<int64_t>(c.stream.reorder_ms * 1e6);
    // A tick is shown a latency after its frame: as many frames as end in
    // that time may wait for their repairs at once.
    if (synced && c.sync.timed())
      ao.repair_frames = static_cast<size_t>(
          std::ceil(static_cast<double>(c.sync.latency_bound_ns()) * c.wall.fps / 1e9));
  }
  return ao;
}

}  // namespace tilestream
