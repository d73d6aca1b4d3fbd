// ValidateWallConfig's work (common/wall/wall_config.h), internal to the
// wall wing: the checks of each section's fields (config_check.cpp), and the
// servers, NICs, display nodes and each tile's route (config_routes.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/base/result.h"
#include "common/wall/wall_config.h"

namespace tilestream {

bool IsIpLiteral(const std::string& a);
// RFC 1123: dot-separated labels of 1..63 letters, digits and inner
// hyphens; the last label not all digits, so a mistyped IPv4 address
// ("300.1.1.1") is not taken for a name.
bool IsHostName(const std::string& a);
bool IsWildcard(const std::string& a);

// ValidateWallConfig's work, step by step; every problem is collected with
// its key before the first step that needs the earlier ones right stops.
class ConfigCheck {
 public:
  explicit ConfigCheck(WallConfig* config) : c_(*config) {}

  void Fail(const std::string& key, const std::string& problem);
  bool ok() const { return errors_.empty(); }
  Status status() const;

  void Wall();
  void Stream();
  void Defaults();
  void Servers();
  void Nics();
  void Nodes();
  void ServerTiles();
  void Control();
  void Http();
  void Live();
  void Mpi();
  void AssignNicsToTiles();

 private:
  uint32_t NicServer(const Nic& nic, const std::string& key);
  void NicAddress(size_t i, const std::string& key);
  std::string NicList() const;
  void NodeFields(size_t n, const std::string& key);
  int NodeNic(size_t n, const std::string& key);
  void RouteTile(size_t n, size_t i, int nic, const std::string& key);
  void TilePort(const DisplayNode& node, size_t i, uint32_t t, const std::string& key);

  WallConfig& c_;
  std::vector<std::string> errors_;
  std::map<std::string, uint32_t> server_index_;
  std::map<std::string, uint32_t> nic_index_;               // "server/name" -> NIC
  std::map<std::string, std::vector<uint32_t>> nic_names_;  // "name" -> NICs of that name
  std::map<std::string, uint32_t> nic_addresses_;
  std::vector<int> tile_node_, pinned_, tile_server_;
  std::set<std::string> node_names_;
  std::map<std::pair<std::string, uint16_t>, std::string> used_ports_;  // -> tile
};

}  // namespace tilestream
