#include "common/base/result.h"

#include <cstring>

namespace tilestream {

Status Status::IoError(const std::string& what, int err) {
  return {Code::kIoError, what + ": " + std::strerror(err)};
}

}  // namespace tilestream
