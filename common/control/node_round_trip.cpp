#include "common/control/node_round_trip.h"

namespace tilestream {

NodeRoundTrip::Via NodeRoundTrip::Joined() {
  *this = {};
  return Via::kLine;
}

NodeRoundTrip::Via NodeRoundTrip::DatagramsKnown() {
  if (datagrams_ && !datagrams_lost_) return Via::kNone;
  datagrams_ = true;
  datagrams_lost_ = false;
  unanswered_ = 0;
  return Via::kDatagram;
}

NodeRoundTrip::Via NodeRoundTrip::Ping(int64_t now_ns) {
  if (way() != Via::kDatagram) return way();
  if (unanswered_++ == 0) {
    unanswered_since_ns_ = now_ns;
  } else if (unanswered_ > kJoinPings && now_ns - unanswered_since_ns_ >= kSilentNs) {
    datagrams_lost_ = true;  // blocked on the way there or back: by line again
    if (by_datagram_) estimate_ = {};
    by_datagram_ = false;
  }
  return way();
}

NodeRoundTrip::Answer NodeRoundTrip::Pong(Via via, int64_t ping_ns, int64_t now_ns) {
  if (ping_ns > now_ns || via == Via::kNone) return {};
  if (via == Via::kLine && by_datagram_) return {};  // stretched by TCP, maybe
  if (via == Via::kDatagram) {  // that way works, whatever the pings said before
    unanswered_ = 0;
    datagrams_lost_ = false;
  }
  if (via == Via::kDatagram && !by_datagram_) {
    estimate_ = {};
    by_datagram_ = true;
  }
  estimate_.Sample(now_ns - ping_ns);
  // A pong by line once datagrams are known: their ping is under way.
  return {true, estimate_.samples < kJoinPings && via == way() ? via : Via::kNone};
}

}  // namespace tilestream
