#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <tuple>

#include "sim/scenario.h"

namespace tilestream::sim {

namespace {

// Nodes for `tiles` tiles: node n takes the tiles from n * tiles / nodes on,
// in the layout's order (the reference wall: 15 tiles on 8 nodes).
std::string NodesToml(const Scenario& s) {
  std::string out;
  const uint32_t tiles = s.columns * s.rows;
  for (uint32_t n = 0; n < s.nodes; ++n) {
    out += fmt::format("[[node]]\nname = \"node{}\"\naddress = \"10.0.{}.{}\"\ntiles = [", n,
                       n / 200, 11 + n % 200);
    for (uint32_t t = n * tiles / s.nodes; t < (n + 1) * tiles / s.nodes; ++t)
      out += fmt::format("{}\"r{}c{}\"", t == n * tiles / s.nodes ? "" : ", ", t / s.columns,
                         t % s.columns);
    out += "]\n";
  }
  return out;
}

std::string Nics(int count, double speed_gbps) {
  std::string out;
  for (int i = 0; i < count; ++i) {
    out += fmt::format("[[nic]]\nname = \"eth{}\"\naddress = \"10.{}.0.1\"\n", i + 2, i + 1);
    if (speed_gbps > 0) out += fmt::format("speed_gbps = {}\n", speed_gbps);
  }
  return out;
}

// The reference wall: 5x3 of 2560x1600 on 8 display nodes.
Scenario Reference(double fps, const std::string& nics) {
  Scenario s;
  s.columns = 5;
  s.rows = 3;
  s.nodes = 8;
  s.fps = fps;
  s.seconds = 60;
  s.name = fmt::format("reference-{}fps", fps);
  s.about = fmt::format("the 5x3 wall of 2560x1600 tiles on 8 nodes at {} fps", fps);
  // Four NICs of 10 Gbit/s carry tiles 4, 4, 4 and 3: the NIC of four
  // carries 10 / (4 x 12.3 MB x fps) of the wall's rate (85% at 30 fps,
  // 42% at 60). The wall is asked for 80% of what its NICs carry.
  const double carried = std::min(1.0, 10e9 / (4 * 2560.0 * 1600 * 3 * 8 * fps));
  if (nics != "none") s.min_shown = carried < 1 ? 0.8 * carried : 1.0;
  if (nics == "kernel") {  // four [[nic]] without a speed; the kernel says 10 Gbit/s
    s.nics_toml = Nics(4, 0);
    s.kernel_nic_gbps = 10;
    s.name += "-nics";
    s.about += ", four 10 Gbit/s NICs as the kernel reports them";
  } else if (nics == "speed") {
    s.nics_toml = Nics(4, 10);
    s.name += "-nics-speed";
    s.about += ", four NICs with speed_gbps = 10";
  } else {
    s.about += ", no [[nic]], over loopback (no speed known)";
  }
  return s;
}

// The testbed's 2x2 wall of 2560x1600 at 5 fps, over a path of `rtt_ms`.
Scenario Testbed(const std::string& name, double rtt_ms, double jitter_ms, double loss) {
  Scenario s;
  s.name = name;
  s.about = fmt::format("the testbed's 2x2 wall at 5 fps, rtt {} ms, jitter {} ms, {}% lost",
                        rtt_ms, jitter_ms, loss * 100);
  s.path.one_way_ns = static_cast<int64_t>(rtt_ms * 1e6 / 2);
  s.path.jitter_ns = static_cast<int64_t>(jitter_ms * 1e6);
  s.path.loss = loss;
  if (rtt_ms >= 5) s.latency_ms = -1;  // auto, as a far wall is played
  return s;
}

// The testbed's wall losing `count` datagrams in a row to node `node`,
// `at_ns` into the show.
Scenario Burst(const std::string& name, double rtt_ms, double jitter_ms, int64_t at_ns,
               uint32_t count, int node) {
  Scenario s = Testbed(name, rtt_ms, jitter_ms, 0);
  s.path.bursts = {{at_ns, count}};
  s.burst_node = node;
  s.about += fmt::format(", a burst of {} datagrams to one node", count);
  return s;
}

// The reference wall with and without NICs, and losing datagrams.
void ReferenceScenarios(std::vector<Scenario>& all) {
  for (double fps : {22.0, 30.0, 60.0}) {
    for (const char* nics : {"none", "kernel", "speed"}) {
      Scenario s = Reference(fps, nics);
      // Found by this simulation: with every NIC up nothing caps the wall
      // (the ceiling only cuts below what the NICs carried before a
      // failover); the overload shedder, which follows the tiles' skipped
      // ticks, settles at the 42% the NICs carry with no headroom, and 9%
      // of the ticks are still skipped: 32% shown in a minute.
      if (fps == 60 && s.min_shown < 1) s.expect_failure = {"shown"};
      all.push_back(s);
    }
  }
  for (double loss : {0.01, 0.03}) {
    Scenario s = Reference(22, "none");
    s.name = fmt::format("reference-22fps-lost-{}pct", loss * 100);
    s.about += fmt::format(", {}% of datagrams lost", loss * 100);
    s.path.loss = loss;
    s.seconds = 20;
    all.push_back(s);
  }
  // Issue 43 at the reference wall's scale: far away, every packet lossy,
  // the sync's TCP too, latency auto; each tile holds several frames in
  // repair. 22 fps at 40 ms and 2%; 60 fps at 20 ms and 1% (the 16-core
  // machine showed 1,335 of 1,800 ticks at 60 fps with 1% loss on a LAN
  // before).
  for (const auto& [fps, rtt, loss] :
       {std::tuple{22.0, 40.0, 0.02}, std::tuple{60.0, 20.0, 0.01}}) {
    Scenario s = Reference(fps, "none");
    s.name = fmt::format("reference-{}fps-rtt-{}ms-lost-{}pct", fps, rtt, loss * 100);
    s.about +=
        fmt::format(", rtt {} ms, jitter 2 ms, {}% of every packet lost, TCP too, latency auto",
                    rtt, loss * 100);
    s.path.one_way_ns = static_cast<int64_t>(rtt * 1e6 / 2);
    s.path.jitter_ns = 2'000'000;
    s.path.loss = s.path.tcp_loss = loss;
    s.latency_ms = -1;
    s.seconds = 10;
    // Every tick since auto waits for as many repairs as the loss asks:
    // before, with 2 at 2%, 219 of 220 and 594 of 600 (a tick waits for
    // 210 lost packets, and one in 2,500 needs a third request). Against
    // issue 43's bound (a frame interval + 4 or 3 round trips: 205 and
    // 77 ms): 201 ms, within; 111 ms after these 10 s and 88-90 ms
    // settled, over (docs/decisions.md, "Where 60 fps at 20 ms and 1%
    // stands against the bound").
    all.push_back(s);
  }
}

// Far walls and lossy paths: the testbed's wall as LongPath plays it.
void PathScenarios(std::vector<Scenario>& all) {
  for (double rtt : {10.0, 20.0, 40.0, 80.0})
    all.push_back(Testbed(fmt::format("rtt-{}ms", rtt), rtt, 2, 0.005));
  for (double rtt : {10.0, 80.0}) {  // the ends of issue 43's range
    Scenario s = Testbed(fmt::format("tcp-loss-2pct-{}ms", rtt), rtt, 5, 0.02);
    s.path.tcp_loss = 0.02;
    s.about += ", the sync's TCP segments too";
    all.push_back(s);
  }
  {
    Scenario s = Testbed("tcp-loss-2pct-40ms", 40, 5, 0.02);
    s.path.tcp_loss = 0.02;
    s.about += ", the sync's TCP segments too";
    // Green since the decisions and reports also go as datagrams, each
    // sent three times (common/control/sync_datagram.h): before, a lost
    // segment held every later decision back, skew p99 60-90 ms.
    all.push_back(s);
    // The same decided by the coordinator, as `decide = "server"` has it.
    s.name = "tcp-loss-2pct-40ms-server";
    s.decided_by_server = true;
    s.about += ", decided by the coordinator";
    all.push_back(s);
  }
  {
    // Display nodes that cannot send each other UDP, the wall deciding at
    // its side (the default): the leader hears no report but its own and
    // skips what the coordinator saw complete; after three such ticks the
    // coordinator decides for the rest of the show. The ticks it costs: the
    // three, the ones opened with the leader it then gives up, and the
    // other tiles' three misses before the leader left them out.
    Scenario s = Testbed("lan-blocked", 20, 2, 0.005);
    s.lan.loss = 1;
    s.about += ", the display nodes' LAN carrying nothing";
    s.may_miss = 3 + 3 + static_cast<uint32_t>(std::ceil((0.5 + 0.2) * s.fps));
    all.push_back(s);
  }
  for (double rtt : {40.0, 80.0}) {
    // The 16-core machine's delay line (docs/benchmarks.md): the 2x2 wall
    // at 22 fps, 110 packets lost a tick. With a request asked again
    // going once, `auto`'s 3 repairs left one lost packet in 16,000
    // unrepaired, and it skipped 1 to 4 of 330 ticks with every tile's
    // frame whole in the end.
    Scenario s = Testbed(fmt::format("delay-line-22fps-{}ms-2pct", rtt), rtt, 2, 0.02);
    s.fps = 22;
    s.seconds = 60;
    s.path.tcp_loss = 0.02;
    s.about = fmt::format(
        "the testbed's 2x2 wall at 22 fps, rtt {} ms, jitter 2 ms, 2% of every packet lost, "
        "TCP too, latency auto",
        rtt);
    all.push_back(s);
  }
  {
    Scenario s = Burst("burst-200", 20, 2, 5'000'000'000, 200, 1);
    // Every one recovered since a burst may borrow as much again as the
    // retransmission bucket holds (two frames' share, 137 of them), each
    // asked for once: a node's repairs wait the sync's round trip before
    // they ask again until they measured their own (they used to follow a
    // LAN's 2, 4, 8 ms and asked 4 times).
    all.push_back(s);
  }
  {
    // As the live tests had it: 50 in a row to one node 20 ms away, 8 s
    // in, and on a LAN mid-frame.
    Scenario s = Burst("burst-50", 20, 0, 8'000'000'000, 50, 0);
    all.push_back(s);
    s = Burst("burst-50-lan", 0.1, 0, 2'450'000'000, 50, 0);
    s.about += " mid-frame";
    all.push_back(s);
  }
  {
    Scenario s = Testbed("reorder-dup", 20, 2, 0.005);
    s.path.reorder = 0.005;
    s.path.reorder_by_ns = 2'000'000;
    s.path.duplicate = 0.005;
    s.reorder_ms = 3;
    s.about += ", 0.5% reordered by up to 2 ms, 0.5% duplicated";
    all.push_back(s);
  }
}

// The refusals a sender meets, one of each class (common/net/send_errors.h):
// retried (a full buffer, a signal) and refused (a firewall, ICMP, a route).
const std::vector<int>& EveryRefusal() {
  static const std::vector<int> all = {EAGAIN,        ENOBUFS,      EINTR,        EPERM,
                                       EACCES,        ECONNREFUSED, EHOSTUNREACH, ENETUNREACH,
                                       EADDRNOTAVAIL, EHOSTDOWN};
  return all;
}

// A display node's faults: its link down, its sync's datagrams dropped, the
// node stopped, or dead.
void NodeFaultScenarios(std::vector<Scenario>& all) {
  {
    Scenario s = Testbed("node-link-down", 0.1, 0, 0);
    s.faults.push_back({Fault::Kind::kNodeLinkDown, 2, 3, 2, 0});
    s.about += ", node 2's link down for 2 s";
    s.may_miss = 4;  // the three before it is left out, and the one it comes back in
    all.push_back(s);
  }
  {
    // A firewall that starts dropping the sync's datagrams mid-show: the
    // decisions and reports go by TCP alone, and the node's round trip is
    // measured by line again (NodeRoundTrip) until they get through.
    Scenario s = Testbed("sync-udp-blocked", 40, 2, 0.005);
    s.seconds = 20;
    s.faults.push_back({Fault::Kind::kSyncUdpBlocked, 1, 4, 10, 0});
    s.about += ", node 1's sync datagrams dropped both ways for 10 s";
    all.push_back(s);
  }
  {
    Scenario s = Testbed("node-stopped-10s", 0.1, 0, 0);
    s.seconds = 20;
    s.faults.push_back({Fault::Kind::kNodeStopped, 1, 3, 10, 0});
    s.about += ", node 1 stopped for 10 s (SIGSTOP)";
    s.may_miss = 4;
    all.push_back(s);
  }
  {
    Scenario s = Testbed("node-dies", 0.1, 0, 0.005);
    s.faults.push_back({Fault::Kind::kNodeDies, 2, 3, 0, 0});
    s.about += ", node 2's receiver killed 3 s in";
    s.may_miss = 1;  // the tick under way as its connection closes
    all.push_back(s);
  }
  {
    // The node that decides the ticks (with a latency: the first whose
    // datagrams came, node 2 with this seed) killed: its undecided ticks
    // are abandoned, the next node leads the rest; as the live
    // ReceiverTest.ALeaderThatDiesIsGivenUpAndTheNextDecidesTheRest.
    Scenario s = Testbed("leader-dies", 20, 2, 0.005);
    s.faults.push_back({Fault::Kind::kNodeDies, 2, 3, 0, 0});
    s.about += ", node 2's receiver (the leader) killed 3 s in";
    s.may_miss = 1;
    s.min_leaders_given_up = 1;
    all.push_back(s);
  }
}

// A NIC or a rank failing; refusals; two servers; pixels.
void FaultScenarios(std::vector<Scenario>& all) {
  {
    Scenario s = Reference(22, "kernel");
    s.name = "nic-down-5s";
    s.seconds = 15;
    s.faults.push_back({Fault::Kind::kNicDown, 1, 3, 5, 0});
    s.about += ", NIC eth3 down for 5 s";
    // Three NICs carry 92.5% of the wall's rate for its 110 ticks: asked
    // 80% of that then, every tick else.
    s.may_miss = static_cast<uint32_t>(std::ceil(5 * 22 * (1 - 0.8 * 0.925)));
    all.push_back(s);
  }
  {
    Scenario s = Reference(22, "none");
    s.name = "refused-1pct";
    s.seconds = 20;
    s.refused = 0.01;
    s.about += ", 1% of sends refused (EPERM)";
    all.push_back(s);
  }
  {
    Scenario s = Reference(22, "none");
    s.name = "refused-every-errno";
    s.seconds = 20;
    s.refused = 0.01;
    s.refused_errnos = EveryRefusal();
    s.about += ", 1% of sends refused, each errno a sender meets alike";
    all.push_back(s);
  }
  {
    Scenario s = Testbed("sends-fail", 0.1, 0, 0);
    s.faults.push_back({Fault::Kind::kSendsFail, 1, 3, 0, 0});
    s.about += ", tile r0c1's socket broken 3 s in (EBADF)";
    s.may_miss = 4;  // three missed leave it out, one more under way
    all.push_back(s);
  }
  {
    Scenario s = Testbed("clock-drift", 10, 1, 0.005);
    s.clock_offset_us = 100;
    s.clock_drift_ppm = 20;
    s.about += ", the nodes' clocks 100 us apart and drifting 20 ppm (0.4 ms in 20 s)";
    all.push_back(s);
  }
  {
    Scenario s = Reference(22, "none");
    s.name = "rank-late";
    s.seconds = 20;
    s.faults.push_back({Fault::Kind::kRankLate, 7, 5, 10, 60});
    s.about += ", tile r1c2's rank seeing each tick 60 ms late for 10 s";
    s.min_shown = 0.5;  // the shedder drops ticks on every tile instead of tearing them
    all.push_back(s);
  }
  {
    Scenario s = Reference(22, "none");
    s.name = "two-servers";
    s.seconds = 10;
    s.nics_toml =
        "[[server]]\nname = \"s1\"\nstore = \"/a\"\n[[server]]\nname = \"s2\"\nstore = \"/b\"\n"
        "[[nic]]\nname = \"eth2\"\naddress = \"10.1.0.1\"\nserver = \"s1\"\n"
        "[[nic]]\nname = \"eth3\"\naddress = \"10.2.0.1\"\nserver = \"s1\"\n"
        "[[nic]]\nname = \"eth2\"\naddress = \"10.3.0.1\"\nserver = \"s2\"\n"
        "[[nic]]\nname = \"eth3\"\naddress = \"10.4.0.1\"\nserver = \"s2\"\n";
    s.kernel_nic_gbps = 10;
    s.about += ", over two servers of two NICs each";
    all.push_back(s);
  }
  for (const bool fails : {false, true}) {
    // The library's next movie under loss, every pixel checked: the
    // switch at one tick on every tile, or the movie playing on.
    Scenario s;
    s.name = fails ? "load-fails" : "switch-under-loss";
    s.about = fails ? "2x2 of 320x200 at 30 fps, 1% lost, a load tile 2 cannot open at 3 s"
                    : "2x2 of 320x200 at 30 fps, 1% lost, the next movie loaded at 3 s";
    s.tile_width = 320;
    s.tile_height = 200;
    s.fps = 30;
    s.seconds = 8;
    s.path.loss = 0.01;
    s.pixels = true;
    s.faults.push_back({fails ? Fault::Kind::kLoadFails : Fault::Kind::kLoad, 2, 3, 0, 0});
    all.push_back(s);
  }
  for (double loss : {0.0, 0.01}) {
    Scenario s;
    s.name = fmt::format("pixels-lost-{}pct", loss * 100);
    s.about = fmt::format("2x2 of 320x200 at 30 fps, {}% lost, every pixel checked", loss * 100);
    s.tile_width = 320;
    s.tile_height = 200;
    s.fps = 30;
    s.seconds = 10;
    s.path.loss = loss;
    s.pixels = true;
    all.push_back(s);
  }
}

std::vector<Scenario> MakeScenarios() {
  std::vector<Scenario> all;
  ReferenceScenarios(all);
  PathScenarios(all);
  NodeFaultScenarios(all);
  FaultScenarios(all);
  return all;
}

}  // namespace

const std::vector<Scenario>& Scenarios() {
  static const std::vector<Scenario> all = MakeScenarios();
  return all;
}

const Scenario* FindScenario(const std::string& name) {
  for (const Scenario& s : Scenarios())
    if (s.name == name) return &s;
  return nullptr;
}

std::string Scenario::ConfigToml() const {
  std::string t = fmt::format(
      "[wall]\ncolumns = {}\nrows = {}\ntile_width = {}\ntile_height = {}\nfps = {}\n"
      "[stream]\nmtu = 9000\nreorder_ms = {}\n",
      columns, rows, tile_width, tile_height, fps, reorder_ms);
  if (latency_ms)
    t += (*latency_ms < 0 ? "[sync]\nlatency_ms = \"auto\"\n"
                          : fmt::format("[sync]\nlatency_ms = {}\n", *latency_ms)) +
         (decided_by_server ? "decide = \"server\"\n" : "");
  return t + nics_toml + NodesToml(*this);
}

std::string Scenario::Describe() const {
  std::string said;
  for (const Fault& f : faults) {
    static const char* kNames[] = {"nic-down",  "node-link-down", "node-stopped",
                                   "rank-late", "node-dies",      "sends-fail",
                                   "load",      "load-fails",     "sync-udp-blocked"};
    said += fmt::format(" {}({} at {:.1f}s for {:.1f}s{})", kNames[static_cast<int>(f.kind)],
                        f.which, f.at_s, f.for_s,
                        f.kind == Fault::Kind::kRankLate ? fmt::format(" by {}ms", f.late_ms) : "");
  }
  if (path.reorder > 0)
    said += fmt::format(" reordered {:.2f}% by up to {:.1f} ms (reorder_ms {})", path.reorder * 100,
                        path.reorder_by_ns / 1e6, reorder_ms);
  if (path.duplicate > 0) said += fmt::format(" duplicated {:.2f}%", path.duplicate * 100);
  if (clock_offset_us > 0 || clock_drift_ppm > 0)
    said += fmt::format(" clocks {:.0f} us apart, drifting {:.1f} ppm", clock_offset_us,
                        clock_drift_ppm);
  if (!refused_errnos.empty()) said += fmt::format(" ({} errnos)", refused_errnos.size());
  if (decided_by_server) said += " decided by the server";
  if (lan.loss > 0) said += fmt::format(" lan lost {:.2f}%", lan.loss * 100);
  return fmt::format(
      "{}x{} of {}x{} on {} nodes at {} fps for {} s; rtt {:.1f} ms jitter {:.1f} ms, lost {:.2f}% "
      "(tcp {:.2f}%), {} bursts, refused {:.2f}%, latency {}, nics: {}{}",
      columns, rows, tile_width, tile_height, nodes, fps, seconds, path.one_way_ns * 2 / 1e6,
      path.jitter_ns / 1e6, path.loss * 100, path.tcp_loss * 100, path.bursts.size(), refused * 100,
      latency_ms ? (*latency_ms < 0 ? "auto" : fmt::format("{} ms", *latency_ms)) : "none",
      nics_toml.empty()     ? "none"
      : kernel_nic_gbps > 0 ? fmt::format("the kernel's {} Gbit/s", kernel_nic_gbps)
                            : "speed_gbps",
      said);
}

namespace {

// The swarm's later draws (after those of the first swarm, which they
// leave as they were): reordering within the receivers' window and
// duplicates, refusals of every class, clocks that drift, a receiver
// killed, a socket broken, the next movie loaded.
void DrawMore(Rng& r, Scenario& s) {
  if (r.Chance(0.15)) {
    s.path.reorder = r.Uniform() * 0.02;
    s.path.reorder_by_ns = static_cast<int64_t>(r.Uniform() * 2e6);
    s.reorder_ms = std::ceil(s.path.reorder_by_ns / 1e6) + 1;
  }
  if (r.Chance(0.15)) s.path.duplicate = r.Uniform() * 0.02;
  if (s.refused > 0 && r.Chance(0.5)) s.refused_errnos = EveryRefusal();
  if (r.Chance(0.2)) s.clock_drift_ppm = r.Uniform() * 50;  // 0.15 ms in 3 s at most
  const uint32_t tiles = s.columns * s.rows;
  if (s.nodes >= 2 && r.Chance(0.05)) {
    s.faults.push_back(
        {Fault::Kind::kNodeDies, static_cast<uint32_t>(r.Next() % s.nodes), 1, 0, 0});
    s.may_miss += 1;
  }
  if (tiles >= 2 && r.Chance(0.05)) {
    s.faults.push_back({Fault::Kind::kSendsFail, static_cast<uint32_t>(r.Next() % tiles), 1, 0, 0});
    s.may_miss += 4;
  }
  if (r.Chance(0.1))  // the next movie, which one tile in five cannot open
    s.faults.push_back({r.Chance(0.2) ? Fault::Kind::kLoadFails : Fault::Kind::kLoad,
                        static_cast<uint32_t>(r.Next() % tiles), 0.5 + r.Uniform(), 0, 0});
}

}  // namespace

// A random wall within bounds: small tiles, so that 500 run in minutes.
Scenario SwarmScenario(uint64_t seed) {
  Rng r(seed);
  const auto pick = [&](uint32_t lo, uint32_t hi) {
    return lo + static_cast<uint32_t>(r.Next() % (hi - lo + 1));
  };
  Scenario s;
  s.seed = seed;
  s.name = fmt::format("swarm-{}", seed);
  s.columns = pick(1, 5);
  s.rows = pick(1, 3);
  s.nodes = pick(1, s.columns * s.rows);
  static const uint32_t kSizes[][2] = {{320, 200}, {640, 400}, {960, 600}};
  const auto* size = kSizes[pick(0, 2)];
  s.tile_width = size[0];
  s.tile_height = size[1];
  static const double kFps[] = {5, 10, 22, 30, 60};
  s.fps = kFps[pick(0, 4)];
  s.seconds = 3;
  const double rtt_ms = std::min(80.0, 0.1 + r.Uniform() * r.Uniform() * 80);
  s.path.one_way_ns = static_cast<int64_t>(rtt_ms * 1e6 / 2);
  s.path.jitter_ns = static_cast<int64_t>(r.Uniform() * std::min(2.0, rtt_ms / 4) * 1e6);
  s.path.loss = r.Chance(0.5) ? r.Uniform() * 0.02 : 0;
  // Without a playout latency a node shows a tick as its decision
  // arrives, so the path's jitter is the wall's skew: such walls are LANs.
  if (rtt_ms >= 1 || s.path.jitter_ns > 100'000 || r.Chance(0.3)) s.latency_ms = -1;
  s.refused = r.Chance(0.2) ? r.Uniform() * 0.01 : 0;
  if (s.path.loss > 0 || s.refused > 0) {
    // Found by the swarm, issue 43's to fix: at 60 fps a tile's repair
    // that needs a third round, or a lost tail found only when the
    // pacer's next burst comes, misses a tick now and then (about 1 in
    // 180 in 4% of the walls; seeds 19, 31, 39). Fixed since: one frame
    // in repair, a LAN's retry schedule far away, a retry before the
    // answer under jitter.
    s.may_fail = {"recovered", "requests", "shown"};
    s.may_fail_why = "repair under loss (issue 43)";
  }
  if (r.Chance(0.3)) s.clock_offset_us = r.Uniform() * 100;
  if (r.Chance(0.2)) {
    s.nics_toml = Nics(static_cast<int>(pick(2, 4)), 0);
    s.kernel_nic_gbps = 10;
    if (r.Chance(0.3)) s.faults.push_back({Fault::Kind::kNicDown, 0, 1, 0.5 + r.Uniform(), 0});
  }
  // Faults a second in: a node's link down or the node stopped (it
  // misses the ticks until it is left out), a rank late, the sync's TCP
  // losing segments.
  if (r.Chance(0.1))
    s.faults.push_back({Fault::Kind::kNodeLinkDown, pick(0, s.nodes - 1), 1, 0.2 + r.Uniform(), 0});
  if (r.Chance(0.1))
    s.faults.push_back({Fault::Kind::kNodeStopped, pick(0, s.nodes - 1), 1, 0.2 + r.Uniform(), 0});
  if (r.Chance(0.1))
    s.faults.push_back({Fault::Kind::kRankLate, pick(0, s.columns * s.rows - 1), 1, 1,
                        r.Uniform() * 1000 / s.fps});
  // Three ticks missed leave a node out, one more may go by as it comes
  // back; a wall of one node shows nothing while it is out, nor until TCP
  // retransmits after the link is back (its timeout doubled while down:
  // up to the outage again, and the 200 ms minimum; seed 2603).
  s.may_miss = 4 * static_cast<uint32_t>(s.faults.size());
  for (const Fault& f : s.faults)
    if (s.nodes == 1 && f.kind != Fault::Kind::kNicDown && f.kind != Fault::Kind::kRankLate)
      s.may_miss += static_cast<uint32_t>(std::ceil((2 * f.for_s + 0.2) * s.fps));
  for (const Fault& f : s.faults)  // at most 1.5 s of a 3 s show
    if (f.kind == Fault::Kind::kNicDown || f.kind == Fault::Kind::kRankLate) s.min_shown = 0.5;
  // The sync's TCP losing segments: its lines come as datagrams too, so
  // nothing may fail for it (it did before: seeds 2855, 2909).
  if (r.Chance(0.1)) s.path.tcp_loss = r.Uniform() * 0.02;
  DrawMore(r, s);
  return s;
}

}  // namespace tilestream::sim
