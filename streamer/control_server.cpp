#include "streamer/control_server.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/base/json_text.h"
#include "common/base/words.h"
#include "common/net/line_channel.h"
#include "common/wall/token_file.h"

namespace tilestream {

Result<std::unique_ptr<ControlServer>> ControlServer::Open(const WallConfig& config,
                                                           SwapSyncMaster* sync,
                                                           CommandHandler handler, Clock* clock) {
  std::unique_ptr<ControlServer> s(new ControlServer(config, sync, std::move(handler)));
  s->receiver_stats_.resize(config.tile_count());
  if (!config.control.token_file.empty()) {
    auto token = ReadToken(config.control.token_file);
    if (!token.ok()) return token.status();
    s->token_ = *token;
  }
  for (const DisplayNode& n : config.nodes)
    if (auto host = SocketAddress::Resolve(n.address, 0); host.ok())
      s->node_hosts_.push_back(*host);
  ControlPort::Options o;
  o.settings = config.control;
  o.reserved = static_cast<uint32_t>(2 * config.nodes.size());
  o.clock = clock;
  ControlServer* server = s.get();
  o.reserved_for = [server](const sockaddr_storage& peer) { return server->FromNode(peer); };
  auto port = ControlPort::Listen(
      o, [server](uint64_t id, const std::string& line) { server->Handle(id, line); },
      [server](uint64_t id) { server->Closed(id); });
  if (!port.ok()) {
    return Status::IoError(
        fmt::format("control listener: {} (is another streamer running? "
                    "control.port in {} sets the port)",
                    port.status().message(), config.source));
  }
  s->port_ = std::move(port).value();
  s->port_number_ = s->port_->core().port();
  s->OpenSyncDatagrams();
  return s;
}

bool ControlServer::FromNode(const sockaddr_storage& peer) const {
  return std::any_of(node_hosts_.begin(), node_hosts_.end(),
                     [&](const SocketAddress& n) { return n.SameHost(peer); });
}

// Also for lines that came before the peer closed (a sync report, a last
// command): a closed connection just drops the reply. A connection closed
// for a wrong token reads nothing more.
void ControlServer::Handle(uint64_t id, const std::string& line) {
  Client& c = clients_[id];
  if (c.node >= 0 && HandleSyncLine(id, c, line)) return;
  // Anything else on a sync connection is a command (the receiver's keys).
  const auto [word, rest] = SplitFirstWord(line);
  if (word.empty()) return;
  if (word == "auth" && c.node < 0) {
    if (token_.empty()) return Send(id, OkReply());  // nothing to check on this listener
    c.authorised = ConstantTimeEquals(rest, token_);
    if (!c.authorised) return port_->Close(id, ErrorReply("wrong token"));
    return Send(id, OkReply());
  }
  if (!c.authorised && !token_.empty())
    return port_->Close(id, ErrorReply("this listener needs 'auth TOKEN' first"));
  if (word == "sync" && c.node < 0) return Subscribe(id, c, rest);
  Send(id, handler_ ? handler_(line) : ErrorReply("unknown command: " + Printable(word)));
}

void ControlServer::Closed(uint64_t id) {
  const auto it = clients_.find(id);
  if (it == clients_.end()) return;
  Drop(it->second);
  clients_.erase(it);
}

}  // namespace tilestream
