// Runs the calling process on a NUMA node and prefers that node's memory
// for what it allocates afterwards (libnuma), so that a tile rank, its
// frame buffers and its NIC sit together. Without NUMA (or node -1) it does
// nothing: never an error.
#pragma once

namespace tilestream {

// Returns the node used, or -1 when nothing was done.
int PlaceOnNumaNode(int node);

}  // namespace tilestream
