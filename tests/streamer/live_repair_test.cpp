// A live source's repairs (issue 44, point 3; docs/live.md): the streamer
// asks a source whose SDP offers RTX (RFC 4588) for the packets it lost,
// with RFC 4585 Generic NACKs, and takes the retransmissions; a source
// without RTX is never asked. The test is the sender, on loopback: it
// leaves a packet out, reads the NACK, and answers it as an RTX sender.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "common/net/udp_socket.h"
#include "common/wire/packetizer.h"
#include "common/wire/rtcp_feedback.h"
#include "streamer/live_sources.h"
#include "tests/support/packet_builder.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait_for.h"

namespace tilestream {
namespace {

constexpr TileGeometry kPicture{64, 40};
constexpr uint8_t kRtx = 97;

// A sender's socket on 127.0.0.1, sending to `port`; NACKs come back to it.
class Source {
 public:
  explicit Source(uint16_t port) : fd_(socket(AF_INET, SOCK_DGRAM, 0)) {
    sockaddr_in local{};
    local.sin_family = AF_INET;
    local.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<const sockaddr*>(&local), sizeof local), 0);
    const timeval wait{0, 200'000};  // a receive gives up after 200 ms
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
    to_.sin_family = AF_INET;
    to_.sin_port = htons(port);
    to_.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  }
  ~Source() { close(fd_); }
  void Send(const std::vector<std::byte>& d) const {
    sendto(fd_, d.data(), d.size(), 0, reinterpret_cast<const sockaddr*>(&to_), sizeof to_);
  }
  // The next datagram the streamer sent back (empty: none within 200 ms).
  std::vector<std::byte> Receive() const {
    std::vector<std::byte> d(1500);
    const ssize_t n = recv(fd_, d.data(), d.size(), 0);
    d.resize(n > 0 ? size_t(n) : 0);
    return d;
  }

 private:
  int fd_;
  sockaddr_in to_{};
};

class LiveRepair : public ::testing::Test {
 protected:
  // A live source `cam` listening on a free port, its SDP offering RTX or not.
  void Start(bool rtx) {
    UdpReceiverOptions o;
    o.bind_address = "127.0.0.1";
    port_ = UdpReceiver::Open(o)->port();  // free now, closed again
    std::ofstream(dir_ / "cam.sdp") << "v=0\nc=IN IP4 127.0.0.1\nm=video " << port_ << " RTP/AVP 96"
                                    << (rtx ? " 97" : "") << "\na=rtpmap:96 raw/90000\n"
                                    << "a=fmtp:96 sampling=RGB; width=64; height=40; depth=8\n"
                                    << (rtx ? "a=rtpmap:97 rtx/90000\na=fmtp:97 apt=96\n" : "");
    LiveSourceSettings s;
    s.name = "cam";
    s.sdp = dir_ / "cam.sdp";
    auto source = LiveSource::Start(s, dir_ / "ring", 30, nullptr);
    ASSERT_TRUE(source.ok()) << source.status().message();
    live_ = std::move(source).value();
  }

  // Frame `n` (1, 2, ...)'s packets, as our packetizer cuts them at MTU
  // 1500, numbered on from the frame before's from 100.
  static std::vector<std::vector<std::byte>> Frame(uint32_t n) {
    PacketizerOptions po;
    po.tile = kPicture;
    po.max_payload = 1460;
    po.ssrc = 0x5eed;
    const Packetizer p = *Packetizer::Create(po);
    const std::vector<std::byte> pixels = testing::PatternFrame(kPicture, n);
    std::vector<std::vector<std::byte>> out;
    for (uint32_t i = 0; i < p.packet_count(); ++i) {
      std::vector<std::byte> packet(p.packet_size(i));
      p.Build(i, pixels, n * 3000, 100 + (n - 1) * p.packet_count() + i, packet);
      out.push_back(std::move(packet));
    }
    return out;
  }

  nlohmann::json Status() const {
    nlohmann::json j;
    live_->Describe(MonotonicNs(), &j);
    return j;
  }

  testing::TempDir dir_;
  uint16_t port_ = 0;
  std::unique_ptr<LiveSource> live_;
};

TEST_F(LiveRepair, ASourceOfferingRtxIsAskedForWhatItLostAndRepaired) {
  ASSERT_NO_FATAL_FAILURE(Start(/*rtx=*/true));
  const Source source(port_);
  // Frame 1 whole (the stream's first packets are on probation: a gap there
  // is no loss), frame 2 without its second packet, frame 3 whole.
  const auto second = Frame(2);
  ASSERT_GE(second.size(), 3u);
  for (const auto& p : Frame(1)) source.Send(p);
  for (size_t i = 0; i < second.size(); ++i)
    if (i != 1) source.Send(second[i]);
  for (const auto& p : Frame(3)) source.Send(p);
  // Asked for, by its sequence number, in a Generic NACK.
  std::vector<uint16_t> asked;
  for (int tries = 0; tries < 50 && asked.empty(); ++tries) {
    const std::vector<std::byte> d = source.Receive();
    std::array<NackRequest, 16> nacks;
    size_t count = 0;
    if (d.empty() || ParseGenericNacks(d, nacks, &count) != RtcpError::kOk) continue;
    for (size_t k = 0; k < count; ++k)
      ForEachNacked(nacks[k].entry, [&](uint16_t s) { asked.push_back(s); });
  }
  const auto lost = static_cast<uint16_t>(100 + second.size() + 1);  // frame 2's packet 1
  ASSERT_EQ(asked, std::vector<uint16_t>{lost});
  source.Send(testing::MakeRtx(second[1], kRtx, 0x5eee, 1));
  ASSERT_TRUE(testing::WaitFor([&] { return Status().value("recovered", 0) == 1; }))
      << Status().dump();
  const nlohmann::json s = Status();
  EXPECT_EQ(s["lost"], 1);
  EXPECT_GE(s["nack_requested"].get<uint64_t>(), 1u);
  EXPECT_EQ(s["frames"], 3) << "the repaired frame and the two around it";
}

TEST_F(LiveRepair, ASourceWithoutRtxIsNeverAsked) {
  ASSERT_NO_FATAL_FAILURE(Start(/*rtx=*/false));
  const Source source(port_);
  for (uint32_t n = 1; n <= 5; ++n) {
    const auto frame = Frame(n);
    for (size_t i = 0; i < frame.size(); ++i)
      if (n != 2 || i != 1) source.Send(frame[i]);  // frame 2's second packet lost
  }
  ASSERT_TRUE(testing::WaitFor([&] { return Status().value("frames", 0) == 4; }))
      << Status().dump();
  EXPECT_TRUE(source.Receive().empty()) << "a datagram to a source that offers no RTX";
  const nlohmann::json s = Status();
  EXPECT_EQ(s["lost"], 1);
  EXPECT_EQ(s["nack_requested"], 0);
  EXPECT_EQ(s["incomplete"], 1);
}

}  // namespace
}  // namespace tilestream
