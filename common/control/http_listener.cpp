#include "common/control/http_listener.h"

#include "common/wall/token_file.h"

namespace tilestream {

Result<HttpServiceOptions> HttpListenerOptions(const WallConfig& c, std::string name,
                                               std::string address, uint16_t port) {
  HttpServiceOptions o;
  o.name = std::move(name);
  o.listen_address = std::move(address);
  o.port = port;
  o.max_clients = c.http.max_clients;
  o.max_body_bytes = c.http.max_body_bytes;
  o.timeout_s = c.http.timeout_s;
  if (!c.control.token_file.empty()) {
    auto token = ReadToken(c.control.token_file);
    if (!token.ok()) return token.status();
    o.token = *token;
  }
  return o;
}

}  // namespace tilestream
