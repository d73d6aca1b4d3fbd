#include "common/base/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <memory>
#include <string>

namespace tilestream {

Status SetUpLogging(std::string_view program, std::string_view level) {
  const auto parsed = spdlog::level::from_str(std::string(level));
  // from_str answers "off" for anything it does not know.
  if (parsed == spdlog::level::off && level != "off")
    return Status::InvalidArgument(
        fmt::format("--log-level: '{}' is not one of {}", level, kLogLevels));
  auto logger = std::make_shared<spdlog::logger>(
      std::string(program), std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  logger->set_pattern(fmt::format("%Y-%m-%d %H:%M:%S.%e %l {}: %v", program));
  logger->set_level(parsed);
  logger->flush_on(spdlog::level::trace);  // an event is worth its write
  spdlog::set_default_logger(logger);
  return Status::Ok();
}

}  // namespace tilestream
