// packet_rate: how fast one core packetizes a tile frame and parses +
// assembles it back, against memcpy of the same frame measured in the same
// run (the ceiling of any path that copies each pixel once).
//
//   packet_rate [--width 2560] [--height 1600] [--mtu 9000] [--seconds 1] [--json FILE]
//
// Rates are pixel bytes per second. Each figure is the best of several
// timed rounds, so a noisy neighbour lowers it less.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/base/aligned_buffer.h"
#include "common/base/guarded_main.h"
#include "common/wire/packetizer.h"
#include "common/wire/rfc4175.h"

using namespace tilestream;

namespace {

// Runs `body` (which processes `bytes`) repeatedly for about `seconds` in
// rounds and returns the best rate in GB/s.
double BestRate(double seconds, size_t bytes, const std::function<void()>& body) {
  using Clock = std::chrono::steady_clock;
  body();  // warm up: page faults, caches
  double best = 0;
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) {
    const auto t0 = Clock::now();
    int reps = 0;
    do {
      body();
      ++reps;
    } while (Clock::now() - t0 < std::chrono::milliseconds(100));
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::max(best, reps * bytes / s / 1e9);
  }
  return best;
}

void Escape(void* p) { asm volatile("" : : "g"(p) : "memory"); }

int Run(int argc, char** argv) {
  CLI::App app{"Packetize and parse rates of one tile frame on one core, vs memcpy", "packet_rate"};
  uint32_t width = 2560, height = 1600, mtu = 9000;
  double seconds = 1;
  std::string json_path;
  app.add_option("--width", width, "Tile width");
  app.add_option("--height", height, "Tile height");
  app.add_option("--mtu", mtu, "Link MTU (payload = MTU - 40)");
  app.add_option("--seconds", seconds, "Time per measurement");
  app.add_option("--json", json_path, "Also write the results as JSON to this file");
  CLI11_PARSE(app, argc, argv);

  const TileGeometry tile{width, height};
  PacketizerOptions po;
  po.tile = tile;
  po.max_payload = MaxUdpPayloadForMtu(mtu);
  auto packetizer = Packetizer::Create(po);
  if (!packetizer.ok()) {
    fmt::print(stderr, "packet_rate: {}\n", packetizer.status().message());
    return 1;
  }
  const Packetizer& p = *packetizer;
  const size_t frame_bytes = tile.frame_bytes();

  auto src = AlignedBuffer::Allocate(frame_bytes);
  auto dst = AlignedBuffer::Allocate(frame_bytes);
  // All packets of a frame, as a receiver's ring would hold them.
  auto packets = AlignedBuffer::Allocate(size_t{p.packet_count()} * p.max_packet_size());
  // A sender's ring of packet buffers: small, stays in cache like a NIC ring.
  constexpr size_t kRing = 64;
  std::vector<std::byte> ring(kRing * p.max_packet_size());
  if (!src.ok() || !dst.ok() || !packets.ok()) {
    fmt::print(stderr, "packet_rate: out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < frame_bytes; ++i) src->data()[i] = std::byte(i * 131 + (i >> 12));
  std::vector<size_t> sizes(p.packet_count());
  for (uint32_t i = 0; i < p.packet_count(); ++i)
    sizes[i] = p.Build(i, src->span(), 1234, i,
                       {packets->data() + size_t{i} * p.max_packet_size(), p.max_packet_size()});

  const double memcpy_rate = BestRate(seconds, frame_bytes, [&] {
    std::memcpy(dst->data(), src->data(), frame_bytes);
    Escape(dst->data());
  });
  const double packetize_rate = BestRate(seconds, frame_bytes, [&] {
    for (uint32_t i = 0; i < p.packet_count(); ++i)
      p.Build(i, src->span(), 1234, i,
              {ring.data() + (i % kRing) * p.max_packet_size(), p.max_packet_size()});
    Escape(ring.data());
  });
  uint32_t header_sink = 0;
  const double headers_rate = BestRate(seconds, frame_bytes, [&] {
    for (uint32_t i = 0; i < p.packet_count(); ++i)
      header_sink += static_cast<uint32_t>(p.WriteHeaders(
          i, 1234, i, {ring.data() + (i % kRing) * p.max_packet_size(), p.max_packet_size()}));
    Escape(ring.data());
  });
  size_t bad = 0;
  const double parse_rate = BestRate(seconds, frame_bytes, [&] {
    for (uint32_t i = 0; i < p.packet_count(); ++i) {
      Rfc4175View v;
      if (ParseRfc4175({packets->data() + size_t{i} * p.max_packet_size(), sizes[i]}, tile, &v) !=
          ParseError::kOk) {
        ++bad;
        continue;
      }
      CopySegmentsToFrame(v, tile, dst->span());
    }
    Escape(dst->data());
  });
  if (bad || std::memcmp(dst->data(), src->data(), frame_bytes) != 0) {
    fmt::print(stderr, "packet_rate: the parsed frame differs from the source\n");
    return 1;
  }

  constexpr double kTarget = 10.0;
  fmt::print("tile {}x{} rgb24 ({:.1f} MB), MTU {} ({}-byte UDP payload): {} packets per frame\n",
             width, height, frame_bytes / 1e6, mtu, po.max_payload, p.packet_count());
  fmt::print("{:<24} {:>8}  {:>10}  {}\n", "path", "GB/s", "vs memcpy", "target");
  fmt::print("{:<24} {:>8.1f}  {:>10}  reference\n", "memcpy frame", memcpy_rate, "1.00x");
  auto row = [&](const char* name, double rate, bool targeted) {
    fmt::print("{:<24} {:>8.1f}  {:>9.2f}x  {}\n", name, rate, rate / memcpy_rate,
               targeted
                   ? fmt::format(">= {:.0f} GB/s: {}", kTarget, rate >= kTarget ? "met" : "MISSED")
                   : "");
  };
  row("packetize (copy)", packetize_rate, true);
  row("packetize (headers)", headers_rate, false);
  row("parse + assemble", parse_rate, true);
  fmt::print(
      "packetize (headers) is the zero-copy path: headers built, pixels sent from the frame by "
      "iovec\n");

  if (!json_path.empty()) {
    nlohmann::json j = {{"width", width},
                        {"height", height},
                        {"mtu", mtu},
                        {"packets_per_frame", p.packet_count()},
                        {"memcpy_gbps", memcpy_rate},
                        {"packetize_gbps", packetize_rate},
                        {"packetize_headers_gbps", headers_rate},
                        {"parse_gbps", parse_rate},
                        {"packetize_vs_memcpy", packetize_rate / memcpy_rate},
                        {"parse_vs_memcpy", parse_rate / memcpy_rate}};
    std::FILE* f = std::fopen(json_path.c_str(), "w");
    if (!f) {
      fmt::print(stderr, "packet_rate: cannot write {}\n", json_path);
      return 1;
    }
    fmt::print(f, "{}\n", j.dump(2));
    std::fclose(f);
  }
  return header_sink == 0xffffffff ? 2 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tilestream::GuardedMain("packet_rate", [&] { return Run(argc, argv); });
}
