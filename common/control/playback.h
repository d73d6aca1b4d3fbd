// The movie's playback state on the coordinator: which frame every tile
// sends at each tick. Commands change it between ticks, so a change reaches
// every tile at the same tick. Plain logic; not thread-safe.
//
// The position is fractional: at speed 0.5 each frame is sent for two
// ticks, at 2 every other frame is skipped, at -1 the movie plays backwards.
// At either end the movie loops (default) or, with loop off, holds the end
// frame and pauses. While paused the same frame is sent at a low rate (see
// ShouldSend), so a receiver that restarts repaints.
//
// Joystick events map to the same actions (JoystickMap): a scrub axis plays
// at a speed proportional to its deflection while held, then restores the
// state from before; buttons toggle and step.
#pragma once

#include <cstdint>
#include <string>

#include "common/control/control_protocol.h"
#include "common/wall/wall_config.h"

namespace tilestream {

class Playback {
 public:
  // REQUIRES: frames > 0.
  Playback(uint64_t frames, double fps, JoystickMap joystick = {});

  // The frame for this tick, then moves on by the speed (if playing).
  uint64_t Advance();
  // Whether this tick sends a frame: always while playing; while paused,
  // about twice a second, and at once after a seek or step.
  bool ShouldSend(uint64_t tick) const;
  // The frames the disk reader should read ahead per tick: round(speed),
  // at least +-1 while playing; 0 while paused.
  int32_t read_ahead_step() const;

  // Another movie of `frames` frames (a `load`), from frame `first`,
  // playing forwards at speed 1; loop as it was. REQUIRES: first < frames.
  void Load(uint64_t frames, uint64_t first);
  // Applies a command; false with *error for one it cannot (status, help
  // and stop are the server's).
  bool Apply(const Command& c, std::string* error);

  bool playing() const { return playing_; }
  double speed() const { return speed_; }
  bool loop() const { return loop_; }
  uint64_t frame() const;  // the frame the next Advance sends
  uint64_t frames() const { return frames_; }
  const JoystickMap& joystick() const { return joystick_; }
  bool scrubbing() const { return scrubbing_; }

 private:
  void Seek(double position);

  uint64_t frames_;
  uint64_t pause_repeat_;  // ticks between repeats while paused
  JoystickMap joystick_;
  double position_ = 0;
  double speed_ = 1;
  bool playing_ = true;
  bool loop_ = true;
  bool scrubbing_ = false;
  bool moved_ = false;  // sought or stepped since the last Advance
  double saved_speed_ = 1;
  bool saved_playing_ = true;
};

}  // namespace tilestream
