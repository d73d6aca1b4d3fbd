#include "common/control/control_port.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/base/clock.h"
#include "common/base/json_text.h"
#include "common/net/line_channel.h"

namespace tilestream {

Standing ControlStanding(int64_t last_line_ns, int64_t line_started_ns, bool kept,
                         const ControlSettings& s) {
  const bool under_way = line_started_ns >= 0;
  const int64_t line_end =
      under_way ? line_started_ns + int64_t{s.line_timeout_s} * kNsPerSecond : kNoDeadline;
  if (kept) return {Yield::kKept, last_line_ns, line_end};
  const int64_t idle_end = last_line_ns + int64_t{s.idle_timeout_s} * kNsPerSecond;
  if (under_way) return {Yield::kFirst, line_started_ns, std::min(line_end, idle_end)};
  return {Yield::kStale, last_line_ns, idle_end};
}

Result<std::unique_ptr<ControlPort>> ControlPort::Listen(const Options& options,
                                                         LineHandler on_line,
                                                         CloseHandler on_close) {
  std::unique_ptr<ControlPort> p(new ControlPort(options, std::move(on_line), std::move(on_close)));
  const ControlSettings& s = options.settings;
  ConnectionCoreOptions o;
  o.name = "control port";
  o.listen_address = s.listen_address;
  o.port = s.port;
  o.limits = {s.max_clients, s.max_clients, options.reserved, 0};
  o.max_input = size_t{64} * s.max_line_bytes;
  o.max_output = kMaxPendingOutput;
  o.reserved = options.reserved_for;
  o.clock = options.clock;
  auto core = ConnectionCore::Listen(o, p.get());
  if (!core.ok()) return core.status();
  p->core_ = std::move(core).value();
  return p;
}

bool ControlPort::Send(uint64_t id, std::string_view line) {
  line_out_.assign(line);  // reused: a decision to every node each tick allocates nothing
  line_out_.push_back('\n');
  return core_->Send(id, line_out_);
}

void ControlPort::Close(uint64_t id, std::string_view last_line) {
  if (const auto it = states_.find(id); it != states_.end()) it->second.closing = true;
  Send(id, last_line);
  core_->CloseAfterWrite(id);
}

void ControlPort::Keep(uint64_t id, bool kept) {
  const auto it = states_.find(id);
  if (it == states_.end()) return;
  it->second.kept = kept;
  Restand(id, it->second);
}

void ControlPort::Opened(uint64_t id, int64_t now) {
  State& s = states_.try_emplace(id, options_.settings.max_line_bytes).first->second;
  s.last_line_ns = now;
  Restand(id, s);
}

void ControlPort::Readable(uint64_t id, int64_t now) {
  State& s = states_.at(id);
  if (s.closing) return;
  std::string& in = core_->input(id);
  std::string line;
  for (size_t n = 0; n < kLinesPerRound; ++n) {
    switch (s.reader.Next(in, &line)) {
      case LineReader::Got::kLine:
        s.last_line_ns = now;
        on_line_(id, line);
        if (!core_->open(id) || s.closing) return;
        continue;
      case LineReader::Got::kNone:
        break;
      case LineReader::Got::kTooLong:
        in.clear();
        return Close(id, ErrorReply(fmt::format("a line over {} bytes: closing",
                                                options_.settings.max_line_bytes)));
    }
    break;
  }
  if (s.reader.HasLine(in)) core_->Again(id);
  if (!s.reader.Unfinished(in))
    s.line_started_ns = -1;
  else if (s.line_started_ns < 0)
    s.line_started_ns = now;
  Restand(id, s);
}

// A line under way for line_timeout_s is a client holding a place without
// saying anything (a byte every few seconds keeps TCP and any idle bound
// content); so is a command connection without a line for idle_timeout_s.
void ControlPort::Expired(uint64_t id) {
  const State& s = states_.at(id);
  const ControlSettings& c = options_.settings;
  const bool slow_line =
      s.line_started_ns >= 0 &&
      core_->now() >= s.line_started_ns + int64_t{c.line_timeout_s} * kNsPerSecond;
  Send(id,
       ErrorReply(slow_line ? fmt::format("a line not ended within {} s: closing", c.line_timeout_s)
                            : fmt::format("idle for {} s: closing", c.idle_timeout_s)));
}

void ControlPort::Closed(uint64_t id) {
  states_.erase(id);
  if (on_close_) on_close_(id);
}

std::string ControlPort::Refusal() const {
  return ErrorReply(fmt::format("too many clients (at most {})", options_.settings.max_clients)) +
         "\n";
}

std::string ControlPort::Eviction() const {
  return ErrorReply("the control port is full: closed for a newer client") + "\n";
}

}  // namespace tilestream
