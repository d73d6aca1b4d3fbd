// The --log-level flag every program takes (common/base/log.h), for the
// programs' CLI11 parsers. Header-only: the base wing itself has no CLI.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "common/base/log.h"

namespace tilestream {

inline void AddLogLevelFlag(CLI::App* app, std::string* level) {
  app->add_option("--log-level", *level,
                  "events logged on stderr from this level up: " + std::string(kLogLevels))
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
      ->default_val("info");
}

}  // namespace tilestream
