#include "testbed/delay_line.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <poll.h>
#include <time.h>

#include <algorithm>
#include <nlohmann/json.hpp>

extern "C" {
#include <libnetfilter_queue/libnetfilter_queue.h>
}

#include "common/base/clock.h"

namespace tilestream {
namespace {

constexpr size_t kCopyBytes = 64;  // IPv4 and transport headers
constexpr size_t kVerdictMessage = 64;
constexpr size_t kMaxReceives = 512;  // per wake-up, then releases are looked at again

nlohmann::json Percentiles(const HoldHistogram& h) {
  return {{"count", h.count()},
          {"p1_us", h.Percentile(0.01)},
          {"p50_us", h.Percentile(0.5)},
          {"p99_us", h.Percentile(0.99)},
          {"max_us", h.max_us()}};
}

}  // namespace

void HoldHistogram::Add(int64_t ns) {
  ns = std::max<int64_t>(ns, 0);
  ++buckets_[std::min<size_t>(static_cast<size_t>(ns / 10'000), kBuckets - 1)];
  ++count_;
  max_ns_ = std::max(max_ns_, ns);
}

double HoldHistogram::Percentile(double p) const {
  if (count_ == 0) return 0;
  const auto rank = static_cast<uint64_t>(p * static_cast<double>(count_ - 1));
  uint64_t seen = 0;
  for (size_t b = 0; b < kBuckets; ++b) {
    seen += buckets_[b];
    if (seen > rank) return static_cast<double>(b) * 10 + 5;
  }
  return max_us();
}

Result<std::unique_ptr<DelayLine>> DelayLine::Open(const Options& options) {
  mnl_socket* nl = mnl_socket_open(NETLINK_NETFILTER);
  if (!nl) return Status::IoError("netlink socket (NETLINK_NETFILTER)", errno);
  std::unique_ptr<DelayLine> d(new DelayLine(options, nl));
  if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) return Status::IoError("netlink bind", errno);
  d->port_id_ = mnl_socket_get_portid(nl);
  const int size = 64 << 20;  // the packets of a burst while a release is due
  setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size);
  for (uint16_t q : {options.out_queue, options.in_queue})
    if (Status s = d->Bind(q); !s.ok()) return s;
  return d;
}

DelayLine::DelayLine(const Options& options, mnl_socket* nl)
    : options_(options),
      nl_(nl),
      model_(options.spec, MonotonicNs()),
      receive_buffer_(MNL_SOCKET_BUFFER_SIZE + 0xffff),
      verdict_buffer_(256 << 10) {}

DelayLine::~DelayLine() { mnl_socket_close(nl_); }

Status DelayLine::Bind(uint16_t queue) {
  std::vector<char> buffer(MNL_SOCKET_BUFFER_SIZE);
  char* buf = buffer.data();
  nlmsghdr* nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, queue);
  nfq_nlmsg_cfg_put_cmd(nlh, AF_INET, NFQNL_CFG_CMD_BIND);
  if (mnl_socket_sendto(nl_, nlh, nlh->nlmsg_len) < 0)
    return Status::IoError("binding netfilter queue " + std::to_string(queue), errno);
  nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, queue);
  nfq_nlmsg_cfg_put_params(nlh, NFQNL_COPY_PACKET, kCopyBytes);
  nfq_nlmsg_cfg_put_qmaxlen(nlh, options_.queue_max);
  if (mnl_socket_sendto(nl_, nlh, nlh->nlmsg_len) < 0)
    return Status::IoError("configuring netfilter queue " + std::to_string(queue), errno);
  return Status::Ok();
}

int DelayLine::OnPacket(const nlmsghdr* nlh, void* self) {
  nlattr* attr[NFQA_MAX + 1] = {};
  if (nfq_nlmsg_parse(nlh, attr) < 0 || !attr[NFQA_PACKET_HDR]) return MNL_CB_OK;
  const auto* ph =
      static_cast<const nfqnl_msg_packet_hdr*>(mnl_attr_get_payload(attr[NFQA_PACKET_HDR]));
  const auto* g = static_cast<const nfgenmsg*>(mnl_nlmsg_get_payload(nlh));
  const uint8_t* ip = nullptr;
  size_t length = 0;
  if (attr[NFQA_PAYLOAD]) {
    ip = static_cast<const uint8_t*>(mnl_attr_get_payload(attr[NFQA_PAYLOAD]));
    length = mnl_attr_get_payload_len(attr[NFQA_PAYLOAD]);
  }
  static_cast<DelayLine*>(self)->Take(ntohl(ph->packet_id), ntohs(g->res_id), ip, length);
  return MNL_CB_OK;
}

// A packet came up: dropped, or held until its release.
void DelayLine::Take(uint32_t id, uint16_t queue, const uint8_t* ip, size_t length) {
  if (!ip || length < 20 || (ip[0] >> 4) != 4) {
    ++unparsed_;
    return Verdict(id, queue, NF_ACCEPT);
  }
  PacketInfo p;
  p.direction = queue == options_.out_queue ? Direction::kOut : Direction::kIn;
  p.udp = ip[9] == IPPROTO_UDP;
  p.destination =
      (uint32_t{ip[16]} << 24) | (uint32_t{ip[17]} << 16) | (uint32_t{ip[18]} << 8) | ip[19];
  p.bytes = (uint32_t{ip[2]} << 8) | ip[3];
  const PathVerdict v = model_.Judge(p, now_ns_);
  if (v.drop) return Verdict(id, queue, NF_DROP);
  Way& w = way_[static_cast<int>(p.direction)];
  const Held h{id, queue, now_ns_, v.release_ns};
  w.drawn.Add(v.release_ns - now_ns_);
  if (v.reordered)
    w.reordered.push(h);
  else
    w.in_order.push_back(h);
}

void DelayLine::Verdict(uint32_t id, uint16_t queue, int verdict) {
  if (verdict_bytes_ + kVerdictMessage > verdict_buffer_.size()) Flush();
  nlmsghdr* nlh = nfq_nlmsg_put(verdict_buffer_.data() + verdict_bytes_, NFQNL_MSG_VERDICT, queue);
  nfq_nlmsg_verdict_put(nlh, static_cast<int>(id), verdict);
  verdict_bytes_ += NLMSG_ALIGN(nlh->nlmsg_len);
}

Status DelayLine::Flush() {
  if (verdict_bytes_ == 0) return Status::Ok();
  const ssize_t n = mnl_socket_sendto(nl_, verdict_buffer_.data(), verdict_bytes_);
  verdict_bytes_ = 0;
  if (n < 0) {
    ++verdict_errors_;
    if (errno != ENOBUFS && errno != EINTR) return Status::IoError("netlink verdicts", errno);
  }
  return Status::Ok();
}

void DelayLine::ReleaseDue(int64_t now_ns, bool all) {
  for (Way& w : way_) {
    auto release = [&](const Held& h) {
      w.held.Add(now_ns - h.arrived_ns);
      w.late.Add(now_ns - h.release_ns);
      Verdict(h.id, h.queue, NF_ACCEPT);
    };
    while (!w.in_order.empty() && (all || w.in_order.front().release_ns <= now_ns)) {
      release(w.in_order.front());
      w.in_order.pop_front();
    }
    while (!w.reordered.empty() && (all || w.reordered.top().release_ns <= now_ns)) {
      release(w.reordered.top());
      w.reordered.pop();
    }
  }
}

int64_t DelayLine::NextRelease() const {
  int64_t next = INT64_MAX;
  for (const Way& w : way_) {
    if (!w.in_order.empty()) next = std::min(next, w.in_order.front().release_ns);
    if (!w.reordered.empty()) next = std::min(next, w.reordered.top().release_ns);
  }
  return next;
}

// Everything waiting on the socket, up to kMaxReceives messages.
Status DelayLine::Receive() {
  for (size_t i = 0; i < kMaxReceives; ++i) {
    const ssize_t n =
        recv(mnl_socket_get_fd(nl_), receive_buffer_.data(), receive_buffer_.size(), MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) return Status::Ok();
      if (errno == ENOBUFS) {  // the kernel dropped what did not fit
        ++overruns_;
        continue;
      }
      return Status::IoError("netlink receive", errno);
    }
    now_ns_ = MonotonicNs();
    if (mnl_cb_run(receive_buffer_.data(), static_cast<size_t>(n), 0, port_id_, OnPacket, this) < 0)
      ++unparsed_;
  }
  return Status::Ok();
}

Status DelayLine::Run(int64_t until_ns) {
  pollfd pfd{mnl_socket_get_fd(nl_), POLLIN, 0};
  while (!stop_) {
    const int64_t now = MonotonicNs();
    if (now >= until_ns) break;
    const int64_t wait =
        std::clamp<int64_t>(std::min(NextRelease(), until_ns) - now, 0, 100'000'000);
    const timespec ts{static_cast<time_t>(wait / 1'000'000'000),
                      static_cast<long>(wait % 1'000'000'000)};
    const int r = ppoll(&pfd, 1, &ts, nullptr);
    if (r < 0 && errno != EINTR) return Status::IoError("ppoll", errno);
    if (r > 0)
      if (Status s = Receive(); !s.ok()) return s;
    ReleaseDue(MonotonicNs(), false);
    if (Status s = Flush(); !s.ok()) return s;
  }
  ReleaseDue(MonotonicNs(), true);
  return Flush();
}

std::string DelayLine::Report() const {
  nlohmann::json j;
  j["path"] = options_.spec.Describe();
  for (Direction d : {Direction::kOut, Direction::kIn}) {
    const Way& w = way_[static_cast<int>(d)];
    const PathCounts& c = model_.counts(d);
    j[d == Direction::kOut ? "out" : "in"] = {{"packets", c.packets},
                                              {"bytes", c.bytes},
                                              {"lost", c.lost},
                                              {"burst_lost", c.burst_lost},
                                              {"reordered", c.reordered},
                                              {"drawn", Percentiles(w.drawn)},
                                              {"held", Percentiles(w.held)},
                                              {"late", Percentiles(w.late)}};
  }
  j["overruns"] = overruns_;
  j["unparsed"] = unparsed_;
  j["verdict_errors"] = verdict_errors_;
  return j.dump(2);
}

}  // namespace tilestream
