#include "common/net/fair_queue.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tilestream {
namespace {

// One key's flood waits behind every other key's next item, and each key's
// items keep their order.
TEST(FairQueue, KeysTakeTurnsAndEachKeepsItsOrder) {
  FairQueue<std::string> q;
  for (int i = 0; i < 4; ++i) q.Push("flood", "f" + std::to_string(i));
  q.Push("good", "g0");
  q.Push("other", "o0");
  q.Push("good", "g1");
  EXPECT_EQ(q.size(), 7u);
  std::vector<std::string> order;
  while (q.size() > 0) order.push_back(q.Pop());
  EXPECT_EQ(order, (std::vector<std::string>{"f0", "g0", "o0", "f1", "g1", "f2", "f3"}));
}

TEST(FairQueue, AKeyEmptiedAndPushedAgainTakesItsTurnAtTheEnd) {
  FairQueue<int> q;
  q.Push("a", 1);
  q.Push("b", 2);
  EXPECT_EQ(q.Pop(), 1);
  q.Push("a", 3);
  EXPECT_EQ(q.Pop(), 2);
  EXPECT_EQ(q.Pop(), 3);
  EXPECT_EQ(q.size(), 0u);
}

}  // namespace
}  // namespace tilestream
