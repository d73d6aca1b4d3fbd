#include "testbed/path_probe.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/base/clock.h"
#include "common/base/unique_fd.h"
#include "common/net/udp_socket.h"

namespace tilestream {
namespace {

constexpr uint32_t kMagic = 0x54535042;  // "TSPB"
constexpr size_t kStamp = 24;            // magic, number, sent, echoed
constexpr uint64_t kMaxCount = 10'000'000;

struct Stamp {
  uint32_t magic;
  uint32_t number;
  int64_t sent_ns;
  int64_t echoed_ns;
};

UniqueFd UdpSocket() { return UniqueFd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)); }

nlohmann::json Percentiles(std::vector<int64_t> v) {
  if (v.empty()) return nullptr;
  std::sort(v.begin(), v.end());
  auto at = [&](double p) {
    return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1))] / 1e3;
  };
  return {
      {"p1_us", at(0.01)}, {"p50_us", at(0.5)}, {"p99_us", at(0.99)}, {"max_us", v.back() / 1e3}};
}

struct Answers {
  std::vector<int64_t> out, back;
  uint64_t reordered = 0, foreign = 0;
  uint32_t highest = 0;
  int64_t first_echo_ns = INT64_MAX, last_echo_ns = INT64_MIN;
};

void Drain(int fd, uint64_t count, Answers* a) {
  Stamp s{};
  while (true) {
    const ssize_t n = recv(fd, &s, sizeof s, MSG_DONTWAIT);
    if (n < 0) return;
    const int64_t now = MonotonicNs();
    if (n < static_cast<ssize_t>(kStamp) || s.magic != kMagic || s.number >= count) {
      ++a->foreign;
      continue;
    }
    a->out.push_back(s.echoed_ns - s.sent_ns);
    a->back.push_back(now - s.echoed_ns);
    if (s.number < a->highest) ++a->reordered;
    a->highest = std::max(a->highest, s.number);
    a->first_echo_ns = std::min(a->first_echo_ns, s.echoed_ns);
    a->last_echo_ns = std::max(a->last_echo_ns, s.echoed_ns);
  }
}

// Answers as they come until `ns`: each is stamped on arrival, not when
// the next send is done.
void AnswerUntil(int fd, int64_t ns, uint64_t count, Answers* a) {
  for (int64_t now = MonotonicNs(); now < ns; now = MonotonicNs()) {
    const int64_t wait = ns - now;
    const timespec ts{static_cast<time_t>(wait / 1'000'000'000),
                      static_cast<long>(wait % 1'000'000'000)};
    pollfd p{fd, POLLIN, 0};
    if (ppoll(&p, 1, &ts, nullptr) > 0) Drain(fd, count, a);
  }
}

}  // namespace

Result<std::string> RunProbe(const ProbeOptions& o) {
  if (o.count == 0 || o.count > kMaxCount)
    return Status::InvalidArgument("probe: count 1..10000000");
  if (o.bytes < 32 || o.bytes > 65000)
    return Status::InvalidArgument("probe: size 32..65000 bytes");
  if (o.rate_bps <= 0) return Status::InvalidArgument("probe: rate must be positive");
  const size_t colon = o.to.rfind(':');
  if (colon == std::string::npos) return Status::InvalidArgument("probe: --to ADDRESS:PORT");
  auto to = SocketAddress::Resolve(o.to.substr(0, colon),
                                   static_cast<uint16_t>(std::atoi(o.to.c_str() + colon + 1)));
  if (!to.ok()) return to.status();
  UniqueFd fd = UdpSocket();
  const int size = 32 << 20;
  setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size);
  if (connect(fd.get(), to->sockaddr_ptr(), to->length) < 0)
    return Status::IoError("probe: connect " + o.to, errno);
  std::vector<std::byte> datagram(o.bytes, std::byte{0});
  Answers a;
  a.out.reserve(o.count);
  a.back.reserve(o.count);
  const auto interval_ns = static_cast<int64_t>(o.bytes * 8e9 / o.rate_bps);
  const int64_t start = MonotonicNs();
  uint64_t refused = 0;
  for (uint64_t i = 0; i < o.count; ++i) {
    const int64_t slot = start + static_cast<int64_t>(i) * interval_ns;
    if (slot > MonotonicNs() + 50'000) AnswerUntil(fd.get(), slot, o.count, &a);
    const Stamp s{kMagic, static_cast<uint32_t>(i), MonotonicNs(), 0};
    std::memcpy(datagram.data(), &s, sizeof s);
    if (send(fd.get(), datagram.data(), datagram.size(), 0) < 0) ++refused;
    if (i % 16 == 0) Drain(fd.get(), o.count, &a);  // at full rate, no waits between
  }
  const int64_t sent_ns = MonotonicNs() - start;
  for (int64_t end = MonotonicNs() + o.linger_ns;
       a.out.size() < o.count - refused && MonotonicNs() < end;)
    AnswerUntil(fd.get(), std::min(end, MonotonicNs() + 10'000'000), o.count, &a);
  const double echo_s = (a.last_echo_ns - a.first_echo_ns) / 1e9;
  nlohmann::json j{{"sent", o.count},
                   {"refused", refused},
                   {"answered", a.out.size()},
                   {"reordered", a.reordered},
                   {"foreign", a.foreign},
                   {"bytes", o.bytes},
                   {"offered_gbps", o.count * o.bytes * 8 / (sent_ns / 1e9) / 1e9},
                   {"arrived_gbps", echo_s > 0 ? a.out.size() * o.bytes * 8 / echo_s / 1e9 : 0.0},
                   {"out", Percentiles(a.out)},
                   {"back", Percentiles(a.back)}};
  return j.dump(2);
}

Status RunEcho(uint16_t port, double seconds) {
  UniqueFd fd = UdpSocket();
  const int size = 32 << 20;
  setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size);
  sockaddr_in any{};
  any.sin_family = AF_INET;
  any.sin_port = htons(port);
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&any), sizeof any) < 0)
    return Status::IoError("echo: bind port " + std::to_string(port), errno);
  std::vector<std::byte> buffer(65536);
  const int64_t end = MonotonicNs() + static_cast<int64_t>(seconds * 1e9);
  while (MonotonicNs() < end) {
    pollfd p{fd.get(), POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    sockaddr_storage from{};
    socklen_t from_length = sizeof from;
    const ssize_t n = recvfrom(fd.get(), buffer.data(), buffer.size(), MSG_DONTWAIT,
                               reinterpret_cast<sockaddr*>(&from), &from_length);
    if (n < static_cast<ssize_t>(kStamp)) continue;
    Stamp s;
    std::memcpy(&s, buffer.data(), sizeof s);
    if (s.magic != kMagic) continue;
    s.echoed_ns = MonotonicNs();
    sendto(fd.get(), &s, sizeof s, 0, reinterpret_cast<sockaddr*>(&from), from_length);
  }
  return Status::Ok();
}

}  // namespace tilestream
