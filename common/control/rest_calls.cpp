#include "common/control/rest_calls.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common/control/control_protocol.h"

namespace tilestream {
namespace {

Status Expected(std::string_view call, std::string_view example) {
  return Status::InvalidArgument(fmt::format("{}: expected a JSON body like {}", call, example));
}

}  // namespace

// seek {"frame": N}, step {"frames": N} (+1 without a body), speed
// {"speed": X}, loop {"loop": true}, load {"movie": NAME, "frame": N}; the
// others take no body.
Result<std::string> ControlLineOfRestCall(std::string_view call, std::string_view body) {
  if (call == "play" || call == "pause" || call == "toggle" || call == "stop" || call == "next" ||
      call == "previous")
    return std::string(call);
  const nlohmann::json j = nlohmann::json::parse(body.empty() ? "{}" : body, nullptr, false);
  if (call == "seek") {
    if (!j.is_object() || !j.contains("frame") || !j["frame"].is_number_integer())
      return Expected(call, R"({"frame": 120})");
    return fmt::format("seek {}", j["frame"].get<int64_t>());
  }
  if (call == "load") {
    if (!j.is_object() || !j.contains("movie") || !j["movie"].is_string() ||
        (j.contains("frame") && !j["frame"].is_number_integer()))
      return Expected(call, R"({"movie": "earth", "frame": 0})");
    if (!ValidMovieName(j["movie"].get<std::string>()))
      return Status::InvalidArgument(
          "load: \"movie\" is not a movie's name (as /api/movies lists it)");
    return fmt::format("load {} {}", j["movie"].get<std::string>(), j.value("frame", int64_t{0}));
  }
  if (call == "playlist") {
    if (j.is_object() && j.contains("clear") && j["clear"].is_boolean() && j["clear"].get<bool>())
      return std::string("playlist clear");
    if (!j.is_object() || !j.contains("queue") || !j["queue"].is_string())
      return Expected(call, R"({"queue": "earth"} or {"clear": true})");
    if (!ValidMovieName(j["queue"].get<std::string>()))
      return Status::InvalidArgument(
          "playlist: \"queue\" is not a movie's name (as /api/movies lists it)");
    return "queue " + j["queue"].get<std::string>();
  }
  if (call == "step") {
    if (j.is_object() && !j.contains("frames")) return std::string("step +1");
    if (!j.is_object() || !j["frames"].is_number_integer())
      return Expected(call, R"({"frames": -1})");
    return fmt::format("step {:+}", j["frames"].get<int64_t>());
  }
  if (call == "speed") {
    if (!j.is_object() || !j.contains("speed") || !j["speed"].is_number())
      return Expected(call, R"({"speed": -2})");
    return fmt::format("speed {}", j["speed"].get<double>());
  }
  if (call == "loop") {
    if (!j.is_object() || !j.contains("loop") || !j["loop"].is_boolean())
      return Expected(call, R"({"loop": false})");
    return std::string(j["loop"].get<bool>() ? "loop on" : "loop off");
  }
  return Status::InvalidArgument(fmt::format("no REST call '{}'", call));
}

}  // namespace tilestream
