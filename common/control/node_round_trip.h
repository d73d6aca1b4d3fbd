// A display node's round trip as the coordinator measures it on the swap
// sync (docs/control.md, "Playout latency"): pings stamped with the
// coordinator's clock, each answered by the node the way it came.
//
// By line (TCP) until the node's datagrams are known, then by datagram. A
// line's round trip is stretched by a lost segment (a tail-loss probe, or
// a retransmission timeout of 200 ms at least): no path's round trip, and
// one such sample at the join made `auto` choose its maximum (500 ms)
// where 40 ms asked for 200. So once a pong has come by datagram the
// estimate starts over from it, and pongs by line are no longer taken;
// the lines only measure a wall whose datagrams never come (UDP blocked),
// or stopped coming: pings by datagram unanswered for kSilentNs (a firewall
// that starts dropping UDP mid-run) send the pings by line again, and the
// estimate is the lines' until a pong by datagram comes again (the node's
// next datagram tries that way). Three pings in a row (a round trip with
// some deviation before tick 0), each sent the way the last pong came,
// then one a second (the caller's). The control server and the wall's
// simulation both drive it. Plain logic; not thread-safe.
#pragma once

#include <cstdint>

#include "common/base/rtt_estimate.h"

namespace tilestream {

class NodeRoundTrip {
 public:
  enum class Via : uint8_t { kNone, kLine, kDatagram };
  static constexpr uint64_t kJoinPings = 3;
  static constexpr int64_t kSilentNs = 3'000'000'000;

  // Joined, or joined again: everything starts over. The ping to send now.
  Via Joined();
  // A datagram of the node's came: a ping by datagram now if it is the
  // first, or the first since the pings by datagram went unanswered (kNone
  // otherwise).
  Via DatagramsKnown();
  // A ping is due (the caller's, once a second, or more often before tick
  // 0): the way to send it.
  Via Ping(int64_t now_ns);
  // A pong of the ping stamped `ping_ns` came by `via` at `now_ns`.
  struct Answer {
    bool sampled = false;   // the estimate took it
    Via ping = Via::kNone;  // the ping to send now
  };
  Answer Pong(Via via, int64_t ping_ns, int64_t now_ns);
  // The way a ping goes now.
  Via way() const { return datagrams_ && !datagrams_lost_ ? Via::kDatagram : Via::kLine; }
  // The estimate can be used: a pong by datagram came, or kJoinPings by
  // line (a wall whose datagrams do not come). Before, a first pong by
  // line may be a retransmission's: the playout latency, which falls
  // slowly, would keep it for minutes.
  bool settled() const { return by_datagram_ || estimate_.samples >= kJoinPings; }
  const RttEstimate& estimate() const { return estimate_; }

 private:
  RttEstimate estimate_;
  bool datagrams_ = false;       // the node's datagrams are known
  bool datagrams_lost_ = false;  // its pings by datagram went unanswered
  bool by_datagram_ = false;     // the estimate is the datagrams'
  uint64_t unanswered_ = 0;      // pings by datagram since the last pong that way
  int64_t unanswered_since_ns_ = 0;
};

}  // namespace tilestream
