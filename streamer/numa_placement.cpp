#include "streamer/numa_placement.h"

#include <numa.h>

namespace tilestream {

int PlaceOnNumaNode(int node) {
  if (node < 0 || numa_available() < 0 || node > numa_max_node()) return -1;
  if (numa_run_on_node(node) != 0) return -1;
  numa_set_preferred(node);
  return node;
}

}  // namespace tilestream
