// udp_sink: receives and discards UDP on a range of ports (UDP_GRO +
// recvmmsg, one thread per port), so that senders under test have a real
// receiver; prints what each port received. Stops by itself.
//
//   udp_sink --port 50000 --count 15 --seconds 20
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>
#include <vector>

#include "common/base/guarded_main.h"
#include "common/net/udp_socket.h"

namespace {
std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }
int Run(int argc, char** argv) {
  using namespace tilestream;
  CLI::App app{"Receives and discards UDP on ports PORT..PORT+COUNT-1 for SECONDS", "udp_sink"};
  uint16_t port = 50000;
  uint32_t count = 1;
  double seconds = 10;
  std::string address = "127.0.0.1";
  app.add_option("--port", port, "First port");
  app.add_option("--count", count, "Number of ports")->check(CLI::Range(1, 256));
  app.add_option("--seconds", seconds, "Run time");
  app.add_option("--address", address, "Address to bind");
  CLI11_PARSE(app, argc, argv);

  std::vector<std::unique_ptr<UdpReceiver>> receivers;
  for (uint32_t i = 0; i < count; ++i) {
    UdpReceiverOptions o;
    o.bind_address = address;
    o.port = static_cast<uint16_t>(port + i);
    o.receive_buffer = 64 << 20;
    o.timeout_ms = 50;
    auto r = UdpReceiver::Open(o);
    if (!r.ok()) {
      fmt::print(stderr, "udp_sink: port {}: {}\n", port + i, r.status().message());
      return 1;
    }
    receivers.push_back(std::make_unique<UdpReceiver>(std::move(r).value()));
  }
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::vector<std::thread> threads;
  threads.reserve(receivers.size());
  for (auto& r : receivers)
    threads.emplace_back([&r, end] {
      while (!g_stop && std::chrono::steady_clock::now() < end) r->ReceiveBatch();
    });
  for (auto& t : threads) t.join();
  uint64_t total = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const ReceiveStats& s = receivers[i]->stats();
    total += s.bytes;
    fmt::print("udp_sink: port {} {} datagrams {} bytes\n", port + i, s.datagrams, s.bytes);
  }
  fmt::print("udp_sink: total {} bytes\n", total);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tilestream::GuardedMain("udp_sink", [&] { return Run(argc, argv); });
}
