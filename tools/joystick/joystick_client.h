// The joystick client (docs/control.md): reads a joystick or game
// controller through SDL2 and sends its events to the streamer's control
// channel as "axis I V" and "button I 0|1" lines; the coordinator maps them
// to actions through the config's [joystick] table.
//
// Axis values are scaled to -1..1 with a dead zone (inside it: exactly 0,
// always sent when the stick comes back) and rate-limited per axis; button
// presses and releases go at once. When the streamer is away the client
// reconnects once a second and then re-sends the stick positions. One
// thread; SDL's joystick subsystem must be initialised by the caller.
#pragma once

#include <SDL2/SDL.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/net/line_channel.h"

namespace tilestream {

struct JoystickClientOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 7470;
  std::string token;  // sent as "auth TOKEN" first when not empty
  int device = 0;     // SDL joystick index
  double dead_zone = 0.15;
  double max_rate_hz = 30;  // axis updates per second per axis, at most
};

class JoystickClient {
 public:
  explicit JoystickClient(JoystickClientOptions options) : options_(std::move(options)) {}
  ~JoystickClient();

  // Handles SDL events and the connection for up to timeout_ms. Prints one
  // line when the joystick or the streamer comes or goes.
  void Poll(int timeout_ms);
  bool connected() const { return channel_.open(); }
  uint64_t lines_sent() const { return lines_sent_; }

 private:
  void Connect();
  void OpenDevice();
  void Axis(uint32_t index, int16_t raw, bool force);
  void Send(const std::string& line);

  JoystickClientOptions options_;
  SDL_Joystick* joystick_ = nullptr;
  LineChannel channel_;
  int64_t next_connect_ms_ = 0;
  struct AxisState {
    double sent = 0;      // last value sent
    double wanted = 0;    // latest value read
    int64_t sent_ms = 0;  // when
  };
  std::vector<AxisState> axes_;
  uint64_t lines_sent_ = 0;
};

// The joysticks SDL sees: "index: name (axes, buttons)" per line.
std::string ListJoysticks();

}  // namespace tilestream
