// The whole wall in one process on virtual time: the streamer's tile
// senders (TileSender: packetizer, pacer, history, NACK answers, refused
// sends) and its coordinator's tick clock, shedder (TickShedder, with the
// NICs' ceiling of common/wall/nic_failover.h and NIC failover), swap sync
// (SwapSyncMaster) and playout latency (PlayoutLatency); the display nodes'
// assemblers (FrameAssembler with its LossTracker and NACKs) and their
// presenters; between them the paths of sim/path.h. The same classes the
// programs run; the programs' threads, sockets, MPI and SDL stay out.
//
// A run is one seed: every draw (loss, jitter, refusals) comes from it and
// the events run in one order, so the counters come out the same, bit for
// bit, in any build.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/scenario.h"

namespace tilestream::sim {

struct TileCounters {
  uint64_t frames_sent = 0, skipped_ticks = 0;
  uint64_t complete = 0, incomplete = 0;
  uint64_t lost = 0, recovered = 0, unrecoverable = 0, nack_requested = 0;
  uint64_t nack_asked_again = 0;
  uint64_t retransmitted = 0, refused_cap = 0, refused_sends = 0;
  double repair_rtt_ms = 0, repair_rttvar_ms = 0;  // smoothed, request to arrival
};

struct WallReport {
  // The sync, as the programs' final JSON names it.
  uint64_t ticks = 0;  // played by the clock, shed or not
  uint64_t presented = 0, skipped = 0, partial = 0, shed = 0, left_out = 0;
  double skew_p99_ms = 0, skew_max_ms = 0, latency_ms = 0;  // as the coordinator measures it
  int repair_rounds = 0;                                    // the repairs the latency waits for
  // The skew on the virtual clock, of the shows no fault made late.
  double virtual_skew_p99_ms = 0;
  uint64_t shows_excused = 0;
  uint64_t late_decisions = 0;  // reached a node after its moment, its path up
  uint64_t late_decisions_path_down = 0;
  // Decided at the wall's side: leaders named, ticks skipped because the
  // leader they were opened with was given up.
  uint64_t leaders = 0, leaders_given_up = 0, abandoned = 0;
  double shed_keep = 1, shed_ceiling = 1;
  std::vector<TileCounters> tiles;
  // Invariants' own counts.
  uint64_t shown_frames = 0, shown_not_whole = 0, shown_not_exact = 0;
  uint64_t ticks_torn = 0;          // tile frames not shown of a tick their tile took part in
  uint64_t ticks_torn_excused = 0;  // the same, on a node with a fault
  uint64_t tcp_probes = 0, tcp_timeouts = 0;
  uint64_t movie_generation = 0;         // the movie playing at the end (0: the first)
  std::vector<std::string> load_errors;  // as the coordinator logs them
  uint64_t lost_on_paths = 0;            // media datagrams the paths lost (retransmissions too)
  uint64_t dropped_at_nodes = 0;         // datagrams a stopped node's full socket dropped
  uint64_t duplicates = 0;               // datagrams the assemblers saw twice
  // The simulation.
  double wall_seconds = 0, cpu_seconds = 0;
  uint64_t events = 0, datagrams = 0;
};

// Runs the scenario with its seed.
WallReport RunWall(const Scenario& s);

// The invariants every run is held to (docs/simulation.md): the names of
// those that failed, each with what it saw.
std::vector<std::string> CheckInvariants(const Scenario& s, const WallReport& r);
// Whether a run with these failures passes: none, or exactly the known ones.
bool Passes(const Scenario& s, const std::vector<std::string>& failures);

std::string ReportJson(const Scenario& s, const WallReport& r,
                       const std::vector<std::string>& failures);

}  // namespace tilestream::sim
