// A tile's assembler as its display node sets it up for the wall's stream
// (docs/receiver.md): our streamer's SSRC and payload type; with the swap
// sync, a queue for the frames that arrive until their tick is released;
// with retransmission, the repair window and the wait for reordering. The
// receiver and the wall's simulation (sim/) both build their assemblers
// with it, so that the simulation receives as a display node would.
#pragma once

#include <cstdint>

#include "common/receive/frame_assembler.h"
#include "common/wall/wall_config.h"

namespace tilestream {

// `synced`: the node takes part in the swap sync; `retransmission`: the
// node asks for lost packets and the tile's route answers them.
AssemblerOptions WallAssemblerOptions(const WallConfig& c, uint32_t tile, bool synced,
                                      bool retransmission);

}  // namespace tilestream
