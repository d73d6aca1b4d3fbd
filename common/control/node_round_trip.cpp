#include "common/control/node_round_trip.h"

namespace tilestream {

NodeRoundTrip::Via NodeRoundTrip::Joined() {
  *this = {};
  return Via::kLine;
}

NodeRoundTrip::Via NodeRoundTrip::DatagramsKnown() {
  if (datagrams_) return Via::kNone;
  datagrams_ = true;
  return Via::kDatagram;
}

NodeRoundTrip::Answer NodeRoundTrip::Pong(Via via, int64_t ping_ns, int64_t now_ns) {
  if (ping_ns > now_ns || via == Via::kNone) return {};
  if (via == Via::kLine && by_datagram_) return {};  // stretched by TCP, maybe
  if (via == Via::kDatagram && !by_datagram_) {
    estimate_ = {};
    by_datagram_ = true;
  }
  estimate_.Sample(now_ns - ping_ns);
  // A pong by line once datagrams are known: their ping is under way.
  return {true, estimate_.samples < kJoinPings && via == way() ? via : Via::kNone};
}

}  // namespace tilestream
