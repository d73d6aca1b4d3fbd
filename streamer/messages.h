// Messages between the coordinator (rank 0) and the tile ranks (each
// streaming one or more tiles, streamer/rank_plan.h): plain
// structs sent as MPI_BYTE between processes of one build. Point to point
// from rank 0 to each tile rather than MPI_Bcast: a tile rank is busy
// sending for most of a frame interval and cannot progress a broadcast tree
// for others, so a flat fan-out reaches every tile in the same microseconds.
#pragma once

#include <cstdint>
#include <type_traits>

#include "common/net/send_errors.h"

namespace tilestream {

enum MessageTag : int {
  kTagReady = 1,      // tile -> 0: set-up finished (ok or an error)
  kTagTick = 2,       // 0 -> tile: send this frame now, or stop
  kTagStats = 3,      // tile -> 0: counters, once a second and at the end
  kTagThumbnail = 4,  // tile -> 0: a thumbnail of its last frame, about once a second
                      // (streamer/thumbnail_board.h: a header, then the pixels)
  kTagLoad = 5,       // 0 -> tile: pre-roll another movie (a `load`)
  kTagLoaded = 6,     // tile -> 0: that movie's first frames are in, or why not
  kTagLibrary = 7,    // tile -> 0: its server's whole movies, a name a line
                      // (common/control/library_presence.h; text, not a struct)
};

// kEnd: the show's last frames are out; each tile says BYE (a lost tail of
// the last frame is then asked for before that tick's deadline) and
// answers NACKs until kStop.
enum class TickCommand : uint32_t { kPlay = 0, kStop = 1, kHeartbeat = 2, kEnd = 3 };

struct TickMessage {
  uint64_t tick = 0;
  uint64_t frame = 0;           // movie frame index to send
  int64_t interval_ns = 0;      // the frame interval, for pacing
  uint32_t timestamp = 0;       // RTP timestamp of this tick, the same on every tile
  int32_t read_ahead_step = 1;  // frames per tick the disk reader reads ahead (playback speed)
  TickCommand command = TickCommand::kPlay;
  uint32_t doorbell = 0;  // 1: this rank's doorbell rings for each tick (streamer/doorbell.h)
  uint64_t sequence = 0;  // counts the coordinator's tick messages; its ring carries it too
  // The next tick sent comes this many ticks after this one (more than 1
  // while ticks are shed, common/control/tick_shedder.h): the frame is
  // paced over all of that time.
  uint32_t next_in_ticks = 1;
  // Movie loads (docs/streamer.md, "Loading a movie"): the last load sent
  // (a rank that has not seen it takes its LoadMessage, sent before this
  // tick), and the load whose movie `frame` is of (0: the movie the job
  // started with). Carried by every tick, so that a rank that skipped
  // ticks still switches at the first one it takes.
  uint64_t load_generation = 0;
  uint64_t movie_generation = 0;
};

// Pre-roll: every tile opens `movie` (a tile store's directory, on this
// host) and reads from `first_frame` while the current movie plays.
struct LoadMessage {
  uint64_t generation = 0;
  uint64_t first_frame = 0;
  char movie[1024] = {};
};

// One per tile: its pre-roll of load `generation` is done (ok: the first
// frames are read) or failed (message).
struct LoadedMessage {
  uint64_t generation = 0;
  uint32_t tile = 0;
  uint32_t ok = 0;
  char message[400] = {};
};

// One per tile, from the rank that streams it; a rank that could not even
// read the wall sends one for all of its tiles (tile = kAllTiles).
inline constexpr uint32_t kAllTiles = 0xffffffff;

struct ReadyMessage {
  uint32_t tile = kAllTiles;
  uint32_t ok = 0;
  uint32_t direct_io = 0;  // the tile store is read with O_DIRECT
  uint32_t gso = 0;        // the socket sends with UDP GSO
  uint32_t numa_node = 0xffffffff;
  uint32_t doorbell_address = 0;  // IPv4, network byte order (streamer/doorbell.h)
  uint32_t doorbell_port = 0;     // 0: the rank has no doorbell and polls
  char host[64] = {};             // where the rank runs (gethostname)
  char message[400] = {};         // the error, if not ok
};

struct TileStats {
  uint32_t tile = 0;
  uint32_t final = 0;
  uint32_t nic = 0;              // the NIC it streams from now (the config's, unless that is down)
  uint32_t nic_moves = 0;        // times it moved to another NIC and back (NIC failover)
  uint64_t frames = 0;           // frames sent
  uint64_t late_frames = 0;      // not out before the next tick
  uint64_t skipped_ticks = 0;    // ticks dropped because the tile was behind
  uint64_t ticks_seen_late = 0;  // came while its rank waited, taken > interval/4 late (TickWait)
  uint64_t held_frames = 0;      // ticks answered with the last frame (read error)
  uint64_t missed_frames = 0;    // ticks with no frame from the disk in time
  uint64_t packets = 0;
  uint64_t bytes = 0;
  uint64_t syscalls = 0;
  uint64_t send_errors = 0;     // datagrams the kernel refused (all errnos)
  RefusalCounts refusals;       // of which, per errno
  uint64_t refused_resent = 0;  // refused inside a batch, sent when tried again (SendStats)
  uint64_t disk_bytes = 0;
  int64_t disk_read_ns = 0;
  uint64_t pacer_squeezes = 0;  // frames re-planned after a stall (common/send/pacer.h)
  uint64_t pacer_sleeps = 0;    // the rank's sleeps until one of this tile's bursts
  uint64_t nacks = 0;           // NACKs from the receiver (common/send/tile_sender.h)
  uint64_t retransmitted = 0;   // packets sent again (also in packets and bytes)
  uint64_t retransmitted_bytes = 0;
  uint64_t refused_old = 0;  // asked for, but not of the frames kept (tile_sender.h)
  uint64_t refused_cap = 0;  // asked for, but over the retransmission cap
  uint64_t borrowed = 0;     // of retransmitted: on credit, for a burst
  int64_t cpu_ns = 0;        // CPU time of the tile's rank, shared evenly by its tiles
  int64_t elapsed_ns = 0;    // since the tile started streaming
  char error[200] = {};      // the first run-time error, reported once
};
static_assert(std::is_trivially_copyable_v<TileStats>, "sent as MPI_BYTE");

}  // namespace tilestream
