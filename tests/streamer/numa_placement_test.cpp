#include "streamer/numa_placement.h"

#include <gtest/gtest.h>
#include <numa.h>

namespace tilestream {
namespace {

TEST(NumaPlacement, UnknownOrAbsentNodeIsANoOpNotAnError) {
  EXPECT_EQ(PlaceOnNumaNode(-1), -1);
  EXPECT_EQ(PlaceOnNumaNode(4096), -1);  // beyond any machine's nodes
}

TEST(NumaPlacement, PlacesOnNodeZeroWhereThereIsNuma) {
  const int placed = PlaceOnNumaNode(0);
  if (numa_available() < 0) {
    EXPECT_EQ(placed, -1);
  } else {
    EXPECT_EQ(placed, 0);
    numa_run_on_node(-1);  // let the test process run anywhere again
    numa_set_localalloc();
  }
}

}  // namespace
}  // namespace tilestream
