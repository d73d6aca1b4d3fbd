// live_counter: a live source for bench/live_latency.sh (issue 44): sends
// FRAMES pictures of WxH RGB as RTP (RFC 4175) at FPS, each of one colour
// that encodes its number (red: the low 8 bits, green: the next 8, blue
// 0x5a, so never black), and logs per picture the moment its last packet
// left and the checksum a receiver logs for a tile of that colour:
//   NUMBER SENT_REALTIME_NS CHECKSUM
// A wall whose canvas is the picture's size cuts it pixel for pixel, so a
// tile's frame log names the picture it shows. Stops by itself.
//
//   live_counter --to 127.0.0.1:5004 --size 1280x800 --tile 640x400 --fps 30 --frames 300
#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "common/base/clock.h"
#include "common/base/guarded_main.h"
#include "common/receive/tile_receiver.h"
#include "common/wall/layout.h"
#include "common/wire/packetizer.h"

namespace {

using namespace tilestream;

struct Options {
  std::string to = "127.0.0.1:5004", size = "1280x800", tile = "640x400", log = "-";
  double fps = 30;
  uint32_t frames = 300;
};

std::vector<std::byte> Uniform(size_t pixels, uint32_t number) {
  std::vector<std::byte> rgb(pixels * 3);
  for (size_t i = 0; i < rgb.size(); i += 3) {
    rgb[i] = std::byte(number & 0xff);
    rgb[i + 1] = std::byte((number >> 8) & 0xff);
    rgb[i + 2] = std::byte{0x5a};
  }
  return rgb;
}

void SleepUntil(int64_t monotonic_ns) {
  const timespec ts{static_cast<time_t>(monotonic_ns / kNsPerSecond),
                    static_cast<long>(monotonic_ns % kNsPerSecond)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

int Send(const Options& o) {
  const auto size = ParseSize(o.size, "--size", 2, 7680);
  const auto tile = ParseSize(o.tile, "--tile", 1, 7680);
  const size_t colon = o.to.rfind(':');
  sockaddr_in to{};
  to.sin_family = AF_INET;
  if (!size.ok() || !tile.ok() || colon == std::string::npos ||
      inet_pton(AF_INET, o.to.substr(0, colon).c_str(), &to.sin_addr) != 1) {
    fmt::print(stderr, "live_counter: --size, --tile WxH and --to IPV4:PORT, please\n");
    return 2;
  }
  to.sin_port = htons(static_cast<uint16_t>(std::stoi(o.to.substr(colon + 1))));
  PacketizerOptions po;
  po.tile = {size->width, size->height};
  po.max_payload = MaxUdpPayloadForMtu(9000);
  po.ssrc = 0x11ce;
  auto packetizer = Packetizer::Create(po);
  if (!packetizer.ok()) {
    fmt::print(stderr, "live_counter: {}\n", packetizer.status().message());
    return 2;
  }
  FILE* log = o.log == "-" ? stdout : std::fopen(o.log.c_str(), "w");
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (!log || fd < 0) {
    fmt::print(stderr, "live_counter: cannot write {} or open a socket\n", o.log);
    return 1;
  }
  std::vector<std::byte> packet(packetizer->max_packet_size());
  uint32_t sequence = 0;
  const int64_t start = MonotonicNs() + 100'000'000;
  for (uint32_t n = 1; n <= o.frames; ++n) {
    const std::vector<std::byte> picture = Uniform(size_t{size->width} * size->height, n);
    const std::vector<std::byte> tile_frame = Uniform(size_t{tile->width} * tile->height, n);
    SleepUntil(start + static_cast<int64_t>((n - 1) * 1e9 / o.fps));
    const auto timestamp = static_cast<uint32_t>((n - 1) * 90000.0 / o.fps);
    for (uint32_t i = 0; i < packetizer->packet_count(); ++i) {
      const size_t bytes = packetizer->Build(i, picture, timestamp, sequence++, packet);
      sendto(fd, packet.data(), bytes, 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
    }
    fmt::print(log, "{} {} {:016x}\n", n, RealtimeNs(),
               FrameChecksum(tile_frame.data(), tile_frame.size()));
  }
  close(fd);
  if (log != stdout) std::fclose(log);
  return 0;
}

int Run(int argc, char** argv) {
  CLI::App app{"Sends numbered pictures of one colour each as RTP (RFC 4175) and logs when",
               "live_counter"};
  Options o;
  app.add_option("--to", o.to, "Where to: IPV4:PORT (default 127.0.0.1:5004)");
  app.add_option("--size", o.size, "The pictures' size WxH (default 1280x800)");
  app.add_option("--tile", o.tile, "The wall's tile size WxH, for the checksums (default 640x400)");
  app.add_option("--fps", o.fps, "Pictures a second (default 30)")->check(CLI::Range(1.0, 240.0));
  app.add_option("--frames", o.frames, "Pictures to send (default 300)")
      ->check(CLI::Range(1, 60000));
  app.add_option("--log", o.log,
                 "'NUMBER SENT_REALTIME_NS CHECKSUM' per picture (default: stdout)");
  CLI11_PARSE(app, argc, argv);
  return Send(o);
}

}  // namespace

int main(int argc, char** argv) {
  return tilestream::GuardedMain("live_counter", [&] { return Run(argc, argv); });
}
