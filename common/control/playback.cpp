#include "common/control/playback.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tilestream {

Playback::Playback(uint64_t frames, double fps, JoystickMap joystick)
    : frames_(frames),
      pause_repeat_(std::max<uint64_t>(1, static_cast<uint64_t>(fps / 2))),
      joystick_(joystick) {}

uint64_t Playback::frame() const { return static_cast<uint64_t>(std::floor(position_)) % frames_; }

void Playback::Seek(double position) {
  const double n = static_cast<double>(frames_);
  if (loop_) {
    position_ = std::fmod(position, n);
    if (position_ < 0) position_ += n;
    return;
  }
  position_ = std::clamp(position, 0.0, n - 1);
}

void Playback::Load(uint64_t frames, uint64_t first) {
  frames_ = frames;
  position_ = static_cast<double>(first);
  speed_ = 1;
  playing_ = true;
  scrubbing_ = false;
  moved_ = true;
}

uint64_t Playback::Advance() {
  moved_ = false;
  const uint64_t f = frame();
  if (!playing_) return f;
  const double next = position_ + speed_;
  const double n = static_cast<double>(frames_);
  if (!loop_ && (next >= n || next < 0)) {
    position_ = next < 0 ? 0 : n - 1;  // hold the end
    playing_ = false;
    return f;
  }
  Seek(next);
  return f;
}

bool Playback::ShouldSend(uint64_t tick) const {
  return playing_ || moved_ || tick % pause_repeat_ == 0;
}

int32_t Playback::read_ahead_step() const {
  if (!playing_ || speed_ == 0) return 0;
  const auto step = static_cast<int32_t>(std::lround(speed_));
  return step != 0 ? step : (speed_ > 0 ? 1 : -1);
}

namespace {
Command Step(int64_t count, CommandKind kind = CommandKind::kStep) {
  Command c;
  c.kind = kind;
  c.count = count;
  return c;
}
}  // namespace

bool Playback::Apply(const Command& c, std::string* error) {
  switch (c.kind) {
    case CommandKind::kPlay:
      playing_ = true;
      if (speed_ == 0) speed_ = 1;
      return true;
    case CommandKind::kPause:
      playing_ = false;
      return true;
    case CommandKind::kToggle:
      playing_ = !playing_;
      if (playing_ && speed_ == 0) speed_ = 1;
      return true;
    case CommandKind::kSeek:
      if (static_cast<uint64_t>(c.frame) >= frames_) {
        *error = fmt::format("seek {}: the movie has frames 0..{}", c.frame, frames_ - 1);
        return false;
      }
      position_ = static_cast<double>(c.frame);
      moved_ = true;
      return true;
    case CommandKind::kStep:
      playing_ = false;
      Seek(std::floor(position_) + static_cast<double>(c.count));
      moved_ = true;
      return true;
    case CommandKind::kSpeed:
      speed_ = c.value;
      return true;
    case CommandKind::kLoop:
      loop_ = c.on;
      return true;
    case CommandKind::kAxis: {
      if (c.index != joystick_.scrub_axis) return true;  // an unmapped axis: ignored
      const bool centred = std::abs(c.value) < joystick_.dead_zone;
      if (centred) {
        if (scrubbing_) {
          scrubbing_ = false;
          speed_ = saved_speed_;
          playing_ = saved_playing_;
        }
        return true;
      }
      if (!scrubbing_) {
        scrubbing_ = true;
        saved_speed_ = speed_;
        saved_playing_ = playing_;
      }
      // Speed grows with deflection beyond the dead zone, up to scrub_speed.
      const double d = (std::abs(c.value) - joystick_.dead_zone) / (1 - joystick_.dead_zone);
      speed_ = std::copysign(std::max(d * joystick_.scrub_speed, 0.05), c.value);
      playing_ = true;
      return true;
    }
    case CommandKind::kButton:
      if (!c.on) return true;  // act on press
      if (c.index == joystick_.toggle_button) return Apply(Step(0, CommandKind::kToggle), error);
      if (c.index == joystick_.step_back_button) return Apply(Step(-1), error);
      if (c.index == joystick_.step_forward_button) return Apply(Step(1), error);
      return true;
    case CommandKind::kStatus:
    case CommandKind::kHelp:
    case CommandKind::kStop:
    case CommandKind::kMovies:
    case CommandKind::kLoad:
    case CommandKind::kQueue:
    case CommandKind::kPlaylist:
    case CommandKind::kNext:
    case CommandKind::kPrevious:
      break;
  }
  *error = "not a playback command";
  return false;
}

}  // namespace tilestream
