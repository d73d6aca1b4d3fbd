#include "common/wall/token_file.h"

#include <cerrno>
#include <fstream>

namespace tilestream {

Result<std::string> ReadToken(const std::string& path) {
  std::ifstream in(path);
  std::string token;
  if (!in || !std::getline(in, token)) return Status::IoError("token file " + path, errno);
  const auto first = token.find_first_not_of(" \t\r");
  const auto last = token.find_last_not_of(" \t\r");
  token = first == std::string::npos ? "" : token.substr(first, last - first + 1);
  if (token.empty()) return Status::InvalidArgument("token file " + path + " is empty");
  return token;
}

}  // namespace tilestream
