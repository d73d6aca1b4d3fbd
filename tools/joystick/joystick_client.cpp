#include "tools/joystick/joystick_client.h"

#include <fmt/format.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <time.h>

#include <cmath>
#include <cstdio>

#include "common/base/clock.h"
#include "common/base/json_text.h"

namespace tilestream {
namespace {

const char* OrUnknown(const char* name) { return name ? name : "?"; }

}  // namespace

std::string ListJoysticks() {
  std::string out;
  for (int i = 0; i < SDL_NumJoysticks(); ++i) {
    SDL_Joystick* j = SDL_JoystickOpen(i);
    out +=
        fmt::format("{}: {} ({} axes, {} buttons){}\n", i, OrUnknown(SDL_JoystickNameForIndex(i)),
                    j ? SDL_JoystickNumAxes(j) : 0, j ? SDL_JoystickNumButtons(j) : 0,
                    SDL_IsGameController(i) ? ", game controller" : "");
    if (j) SDL_JoystickClose(j);
  }
  return out.empty() ? "no joystick found\n" : out;
}

JoystickClient::~JoystickClient() {
  if (joystick_) SDL_JoystickClose(joystick_);
}

void JoystickClient::OpenDevice() {
  if (joystick_ || options_.device >= SDL_NumJoysticks()) return;
  joystick_ = SDL_JoystickOpen(options_.device);
  if (!joystick_) return;
  axes_.assign(static_cast<size_t>(std::max(0, SDL_JoystickNumAxes(joystick_))), {});
  fmt::print("joystick: {} ({} axes, {} buttons)\n", OrUnknown(SDL_JoystickName(joystick_)),
             axes_.size(), SDL_JoystickNumButtons(joystick_));
  std::fflush(stdout);
}

void JoystickClient::Connect() {
  next_connect_ms_ = MonotonicMs() + 1000;
  auto fd = ConnectTcp(options_.address, options_.port, 200);
  if (!fd.ok()) return;
  channel_ = LineChannel(std::move(fd).value());
  if (!options_.token.empty()) channel_.Send("auth " + options_.token);
  fmt::print("joystick: connected to {}:{}\n", options_.address, options_.port);
  std::fflush(stdout);
  for (AxisState& a : axes_) a.sent_ms = 0, a.sent = std::nan("");  // re-send where the sticks are
}

void JoystickClient::Send(const std::string& line) {
  if (!channel_.Send(line)) return;
  ++lines_sent_;
}

void JoystickClient::Axis(uint32_t index, int16_t raw, bool force) {
  if (index >= axes_.size()) return;
  AxisState& a = axes_[index];
  double v = std::max(-1.0, raw / 32767.0);
  if (std::abs(v) < options_.dead_zone) v = 0;
  a.wanted = v;
  const int64_t now = MonotonicMs();
  const bool due = now - a.sent_ms >= static_cast<int64_t>(1000 / options_.max_rate_hz);
  // The centre always goes (the coordinator stops scrubbing on it); small
  // wobbles do not.
  const bool changed = std::isnan(a.sent) || (v == 0 ? a.sent != 0 : std::abs(v - a.sent) >= 0.01);
  if (!changed || (!due && !force && v != 0)) return;
  Send(fmt::format("axis {} {:.3f}", index, v));
  a.sent = v;
  a.sent_ms = now;
}

void JoystickClient::Poll(int timeout_ms) {
  if (!channel_.open() && MonotonicMs() >= next_connect_ms_) Connect();
  OpenDevice();
  SDL_Event e;
  const int64_t until = MonotonicMs() + timeout_ms;
  do {
    while (SDL_PollEvent(&e)) {
      switch (e.type) {
        case SDL_JOYAXISMOTION:
          if (joystick_ && e.jaxis.which == SDL_JoystickInstanceID(joystick_))
            Axis(e.jaxis.axis, e.jaxis.value, false);
          break;
        case SDL_JOYBUTTONDOWN:
        case SDL_JOYBUTTONUP:
          if (joystick_ && e.jbutton.which == SDL_JoystickInstanceID(joystick_))
            Send(
                fmt::format("button {} {}", e.jbutton.button, e.type == SDL_JOYBUTTONDOWN ? 1 : 0));
          break;
        case SDL_JOYDEVICEREMOVED:
          if (joystick_ && e.jdevice.which == SDL_JoystickInstanceID(joystick_)) {
            SDL_JoystickClose(joystick_);
            joystick_ = nullptr;
            fmt::print("joystick: device gone; waiting for it\n");
            std::fflush(stdout);
          }
          break;
        default:
          break;
      }
    }
    // Rate-limited axis values whose last change was held back.
    if (joystick_) {
      for (uint32_t i = 0; i < axes_.size(); ++i)
        if (axes_[i].wanted != axes_[i].sent)
          Axis(i, SDL_JoystickGetAxis(joystick_, static_cast<int>(i)), false);
    }
    if (channel_.open()) {  // replies: only errors matter
      channel_.Receive();
      while (auto line = channel_.NextLine())
        if (line->find("\"ok\":false") != std::string::npos)
          spdlog::warn("{}", Printable(*line, 300));
      if (!channel_.open()) {
        fmt::print("joystick: the streamer went away ({}); reconnecting\n", channel_.why());
        std::fflush(stdout);
      }
    }
    if (MonotonicMs() < until) poll(nullptr, 0, 5);
  } while (MonotonicMs() < until);
}

}  // namespace tilestream
