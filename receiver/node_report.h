// What a display node says about itself: a line a second (and the overlay
// text and the statistics the coordinator's status shows), and the final
// report per tile, as text and as JSON. The final report is built from
// plain statistics, so it is tested without sockets.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/receive/tile_receiver.h"
#include "common/wall/wall_config.h"
#include "receiver/node_setup.h"
#include "receiver/presenter.h"

namespace tilestream {

// The counters of one tile summed the way the reports show them.
struct TileTotals {
  uint64_t bytes = 0, packets = 0, lost = 0, reordered = 0, duplicate = 0, late = 0, malformed = 0,
           foreign = 0, out_of_sequence = 0, complete = 0, incomplete = 0;
};
TileTotals Sum(const TileReceiverStats& s);

// Once a second: a line on stdout (unless quiet), each tile's overlay text,
// and each tile's last second to the coordinator (with swap sync). Says
// once per tile when its stream does not fit the tile, and when a hard
// receive error ended its thread.
class SecondReporter {
 public:
  SecondReporter(const WallConfig& c, const NodeParts* parts, bool quiet);
  void Report(double elapsed_s, const PresentCounts& counts, Presenter* presenter);
  // Frames the node showed in the last second reported (its first tile's).
  uint64_t fps() const { return fps_; }

 private:
  const WallConfig& c_;
  const NodeParts& p_;
  bool quiet_;
  TileTotals node_previous_;
  std::vector<TileTotals> tile_previous_;
  std::vector<bool> geometry_said_, error_said_;
  uint64_t shown_previous_ = 0;
  uint64_t fps_ = 0;
};

struct NodeFinal {
  std::string node;
  double seconds = 0;
  std::optional<uint64_t> window_updates;  // with windows
  std::optional<PresentCounts> sync;       // with swap sync
  std::vector<std::string> tile_names;
  std::vector<TileReceiverStats> tiles;
};

// The final report: its text (a line for the node, the sync, and per tile)
// and its JSON (receiver --json).
std::string FinalNodeText(const NodeFinal& f);
nlohmann::json FinalNodeJson(const NodeFinal& f);

}  // namespace tilestream
