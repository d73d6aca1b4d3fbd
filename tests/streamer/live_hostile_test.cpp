// A live source's port is open to anyone (issue 44, point 5): strangers'
// packets, garbage, and a source flooding faster than the wall ticks are
// bounded and counted, never shown, never a stall. The test is the source
// here (our packetizer, as the SDP says) so that it can misbehave.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "common/wire/packetizer.h"
#include "tests/streamer/live_fixture.h"

namespace tilestream {
namespace {

using testing::Hex;
using testing::LiveSource;

constexpr uint32_t kTileW = 640, kTileH = 400, kPictureW = 1280, kPictureH = 800;

// A UDP socket sending to 127.0.0.1:port.
class Sender {
 public:
  explicit Sender(uint16_t port) : fd_(socket(AF_INET, SOCK_DGRAM, 0)) {
    to_.sin_family = AF_INET;
    to_.sin_port = htons(port);
    to_.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  }
  ~Sender() { close(fd_); }
  void Send(const std::byte* data, size_t size) const {
    sendto(fd_, data, size, 0, reinterpret_cast<const sockaddr*>(&to_), sizeof to_);
  }

 private:
  int fd_;
  sockaddr_in to_{};
};

std::vector<std::byte> Uniform(size_t pixels, uint32_t n) {
  std::vector<std::byte> rgb(pixels * 3);
  for (size_t i = 0; i < rgb.size(); i += 3) {
    rgb[i] = std::byte(n & 0xff);
    rgb[i + 1] = std::byte(n >> 8);
    rgb[i + 2] = std::byte{0x5a};
  }
  return rgb;
}

// For `seconds`: pictures as fast as this thread sends them (the SDP's
// size, no pacing: a flood for a wall of 30 fps), each of one colour; after
// each, 8 datagrams of garbage and a packet of a stranger's stream (another
// SSRC, from another port). Returns the pictures sent.
uint32_t Flood(uint16_t port, double seconds) {
  PacketizerOptions po;
  po.tile = {kPictureW, kPictureH};
  po.max_payload = MaxUdpPayloadForMtu(9000);
  po.ssrc = 0x50c;
  PacketizerOptions stranger_po = po;
  stranger_po.ssrc = 0xbad;
  const auto source = Packetizer::Create(po), stranger = Packetizer::Create(stranger_po);
  const Sender to_wall(port), from_stranger(port);
  std::vector<std::byte> packet(source->max_packet_size());
  std::mt19937 random(7);
  uint32_t sequence = 0, n = 0;
  const int64_t end = MonotonicNs() + static_cast<int64_t>(seconds * 1e9);
  while (MonotonicNs() < end) {
    ++n;
    const std::vector<std::byte> picture = Uniform(size_t{kPictureW} * kPictureH, n);
    for (uint32_t i = 0; i < source->packet_count(); ++i)
      to_wall.Send(packet.data(), source->Build(i, picture, n * 3000, sequence++, packet));
    for (int g = 0; g < 8; ++g) {
      const size_t size = 1 + random() % packet.size();
      for (size_t b = 0; b < size; ++b) packet[b] = std::byte(random());
      to_wall.Send(packet.data(), size);
    }
    from_stranger.Send(packet.data(),
                       stranger->Build(n % stranger->packet_count(), picture, n * 3000, n, packet));
  }
  return n;
}

TEST_F(LiveSource, StrangersGarbageAndAFloodAreCountedAndNeverShown) {
  ASSERT_NO_FATAL_FAILURE(SetUpWall({}));
  const pid_t left = StartReceiver("left"), right = StartReceiver("right");
  const pid_t streamer = StartStreamer(/*ticks=*/3000);  // stopped below
  EXPECT_EQ(Ctl("load cam").first, 0);
  const int64_t start = MonotonicNs();
  const uint32_t sent = Flood(ports_[4], 2.0);
  // The converting thread has at most this long been at work (it ends
  // within a frame's reception after the flood).
  const double busy_s = (MonotonicNs() - start) / 1e9 + 1.0;
  const nlohmann::json live = Live();
  EXPECT_EQ(Ctl("stop").first, 0);
  const auto shown = EndAndCollect(streamer, left, right);

  // Counted: the garbage, the stranger, the frames coalesced.
  ASSERT_TRUE(live.is_object());
  EXPECT_GT(live["malformed"].get<uint64_t>(), 0u) << live.dump();
  EXPECT_GT(live["strangers"].get<uint64_t>(), 0u) << live.dump();
  const uint64_t frames = live["frames"], pictures = live["pictures"];
  std::printf("flood: %u pictures sent in %.1f s, %llu received whole, %llu converted\n", sent,
              busy_s - 1.0, static_cast<unsigned long long>(frames),
              static_cast<unsigned long long>(pictures));
  EXPECT_GT(pictures, 0u) << live.dump();
  EXPECT_LE(frames, sent) << live.dump();
  // Bounded: no more than two pictures a tick of the wall (30 fps), however
  // fast the source.
  EXPECT_LE(pictures, 1 + busy_s * 2 * 30) << live.dump() << " sent " << sent;
  // The wall played on: no tick skipped that its senders sent.
  const nlohmann::json report = Report();
  ASSERT_TRUE(report.is_object());
  EXPECT_LE(report["sync"]["skipped"].get<uint64_t>(),
            report["aggregate"]["skipped_ticks"].get<uint64_t>())
      << report["sync"].dump();
  // Never shown: anything but the source's pictures (or black before them).
  std::set<std::string> pictures_sent{testing::BlackTile(kTileW, kTileH)};
  for (uint32_t n = 1; n <= sent; ++n) {
    const std::vector<std::byte> tile = Uniform(size_t{kTileW} * kTileH, n);
    pictures_sent.insert(Hex(FrameChecksum(tile.data(), tile.size())));
  }
  for (uint32_t t = 0; t < 4; ++t) {
    SCOPED_TRACE("tile " + std::to_string(t));
    EXPECT_FALSE(shown[t].empty());
    for (const std::string& sum : shown[t])
      ASSERT_TRUE(pictures_sent.count(sum)) << "a frame that no picture sent makes: " << sum;
  }
}

}  // namespace
}  // namespace tilestream
