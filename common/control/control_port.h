// The control port's connections on the connection core
// (common/net/connection_core.h, docs/control.md): one line per command
// and per reply for wallctl and the joystick client, and the display
// nodes' swap-sync connections (streamer/control_server.h says what the
// lines mean). The bounds on its clients (issue 35):
// - A line holds at most control.max_line_bytes and must end within
//   control.line_timeout_s of its first byte; a longer or slower one closes
//   its connection, with an error line saying why.
// - A command connection must send a whole line at least every
//   control.idle_timeout_s; a kept one (a node's sync connection) has no
//   idle bound and never yields its place.
// - The port holds control.max_clients connections, and `reserved` more for
//   the addresses given (the display nodes'). Full, the connection that
//   yields first gives its place to a newcomer: one with a line under way
//   (the oldest such line) before one without (the longest without a line).
// - At most kLinesPerRound lines of one connection a round: a flood cannot
//   hold up the coordinator's frame clock, which waits on this port; the
//   rest wait in its buffer (64 lines' worth; then TCP holds the sender).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/base/result.h"
#include "common/net/connection_core.h"
#include "common/net/line_reader.h"
#include "common/wall/wall_config.h"

namespace tilestream {

// How a control connection stands: the time of its last whole line (or of
// its accept), of the first byte of the line under way (-1: none), and
// whether it is kept.
Standing ControlStanding(int64_t last_line_ns, int64_t line_started_ns, bool kept,
                         const ControlSettings& s);

class ControlPort final : public ConnectionProtocol {
 public:
  static constexpr size_t kLinesPerRound = 32;  // per connection

  struct Options {
    ControlSettings settings;
    uint32_t reserved = 0;  // places beyond max_clients for reserved_for's addresses
    std::function<bool(const sockaddr_storage&)> reserved_for;
    Clock* clock = nullptr;  // the tests'; else CLOCK_MONOTONIC
  };
  using LineHandler = std::function<void(uint64_t id, const std::string& line)>;
  using CloseHandler = std::function<void(uint64_t id)>;

  static Result<std::unique_ptr<ControlPort>> Listen(const Options& options, LineHandler on_line,
                                                     CloseHandler on_close);
  ConnectionCore& core() { return *core_; }

  // Sends `line` and a "\n"; false once the connection is closed.
  bool Send(uint64_t id, std::string_view line);
  // Sends `last_line` and closes once it is written.
  void Close(uint64_t id, std::string_view last_line);
  // A kept connection (a node's sync) has no idle bound and keeps its place.
  void Keep(uint64_t id, bool kept);

  // ConnectionProtocol
  void Opened(uint64_t id, int64_t now) override;
  void Readable(uint64_t id, int64_t now) override;
  void Expired(uint64_t id) override;
  void Closed(uint64_t id) override;
  std::string Refusal() const override;
  std::string Eviction() const override;

 private:
  struct State {
    explicit State(size_t max_line) : reader(max_line) {}
    LineReader reader;
    int64_t last_line_ns = 0;
    int64_t line_started_ns = -1;
    bool kept = false;
    bool closing = false;  // its last line said: nothing more is read
  };

  ControlPort(const Options& options, LineHandler on_line, CloseHandler on_close)
      : options_(options), on_line_(std::move(on_line)), on_close_(std::move(on_close)) {}
  void Restand(uint64_t id, const State& s) {
    core_->Stand(id, ControlStanding(s.last_line_ns, s.line_started_ns, s.kept, options_.settings));
  }

  Options options_;
  LineHandler on_line_;
  CloseHandler on_close_;
  std::unordered_map<uint64_t, State> states_;
  std::string line_out_;  // Send's line and its end
  std::unique_ptr<ConnectionCore> core_;
};

}  // namespace tilestream
