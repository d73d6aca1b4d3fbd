// receiver: flags -> wall config -> the node's tile receivers.
#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <atomic>

#include "common/base/log.h"
#include "common/check/preflight.h"
#include "common/wall/wall_config.h"
#include "receiver/node_receiver.h"
#include "receiver/receiver_options.h"

namespace {

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

// receiver --check: the node's pre-flight findings, then the exit code.
int CheckNode(const tilestream::WallConfig& config, const std::string& node) {
  using namespace tilestream;
  for (uint32_t n = 0; n < config.nodes.size(); ++n) {
    if (config.nodes[n].name != node) continue;
    bool failed = false;
    fmt::print("receiver: pre-flight check of node {} for {}\n{}", node, config.source,
               FormatFindings(CheckReceiverHost(config, n), &failed));
    return failed ? 1 : 0;
  }
  spdlog::error("no display node '{}' in {}", node, config.source);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tilestream;
  ReceiverFlags flags;
  (void)SetUpLogging("receiver");
  if (const auto code = ParseReceiverFlags(argc, argv, &flags)) return *code;
  (void)SetUpLogging("receiver", flags.log_level);  // a known level: the flag checks it
  auto config = ReceiverWallConfig(&flags);
  if (!config.ok()) {
    spdlog::error("{}", config.status().message());
    return 2;
  }
  if (flags.check) return CheckNode(*config, flags.node.node);
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  return RunNodeReceiver(*config, flags.node, &g_stop);
}
