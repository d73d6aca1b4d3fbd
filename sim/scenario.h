// A scenario of the wall's simulation: the wall (its config, as an operator
// writes it), the paths to its display nodes, and the faults, each a line
// here or a draw from the seed; and what the run must show (the bounds the
// invariants hold it to, docs/simulation.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/path.h"

namespace tilestream::sim {

struct Fault {
  // kNodeDies: its receiver is killed (for_s unused): its sync connection
  // closes, what is sent to it goes nowhere. kSendsFail: the tile's socket
  // can never send again (EBADF, a hard error). kLoad: the library's next
  // movie loaded (`load`), every tile pre-rolling it, the wall switching at
  // one tick; kLoadFails: the same, but tile `which` cannot open it, and
  // the movie playing plays on. kSyncUdpBlocked: a firewall drops node
  // `which`'s sync datagrams both ways (its media still comes): the sync
  // goes by TCP alone until they get through again.
  enum class Kind : uint8_t {
    kNicDown,
    kNodeLinkDown,
    kNodeStopped,
    kRankLate,
    kNodeDies,
    kSendsFail,
    kLoad,
    kLoadFails,
    kSyncUdpBlocked
  };
  Kind kind = Kind::kNicDown;
  uint32_t which = 0;  // the NIC, the node or the tile
  double at_s = 0, for_s = 0;
  double late_ms = 0;  // kRankLate: each burst this much later
};

struct Scenario {
  std::string name;
  std::string about;
  // The wall.
  uint32_t columns = 2, rows = 2, tile_width = 2560, tile_height = 1600;
  uint32_t nodes = 4;
  double fps = 5;
  double seconds = 20;
  std::string nics_toml;          // [[nic]] sections; empty: none (the "default" NIC)
  double kernel_nic_gbps = 0;     // what the kernel says each NIC carries; 0: unknown (loopback)
  std::optional<int> latency_ms;  // [sync] latency_ms; -1: "auto"; unset: none
  double reorder_ms = 0;
  // The paths to every node (and back), and the faults.
  PathSettings path;
  PathSettings lan;                 // between the display nodes (the switch), each way
  bool decided_by_server = false;   // [sync] decide = "server"
  int burst_node = -1;              // path.bursts go to this node alone; -1: every node
  double clock_offset_us = 0;       // the nodes' clocks, at most this far apart (synced by PTP)
  double clock_drift_ppm = 0;       // and run up to this much fast or slow, uncorrected
  double refused = 0;               // share of the senders' messages refused,
  std::vector<int> refused_errnos;  // with an errno drawn from these (none: EPERM)
  std::vector<Fault> faults;
  bool pixels = false;  // real pixels, every frame shown checked against its checksum
  // What the run must show: ticks shown of those played, at least, less
  // may_miss (the ticks a fault costs before the wall plays on without a
  // node: three missed in a row leave it out).
  double min_shown = 1.0;
  uint32_t may_miss = 0;
  // Leaders the run must give up at least (a fault aimed at the leader
  // must hit it, or the scenario tests nothing).
  uint32_t min_leaders_given_up = 0;
  // Invariants known to fail, until the issue that fixes them lands: the
  // run passes when they, and they alone, fail (and fails when they hold:
  // the fix landed, and the scenario must say so).
  std::vector<std::string> expect_failure;
  // Invariants a swarm's wall may fail in a region a later issue fixes
  // (may_fail_why says which): the run passes if they do, and counts so.
  std::vector<std::string> may_fail;
  std::string may_fail_why;
  uint64_t seed = 1;

  // The config text the wall plays with.
  std::string ConfigToml() const;
  // What the seed expanded to, one line.
  std::string Describe() const;
};

// The named scenarios (`wallsim --list`), and one drawn for a swarm.
const std::vector<Scenario>& Scenarios();
const Scenario* FindScenario(const std::string& name);
Scenario SwarmScenario(uint64_t seed);

}  // namespace tilestream::sim
