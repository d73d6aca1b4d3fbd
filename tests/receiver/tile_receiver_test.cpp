#include "receiver/tile_receiver.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

#include "tests/support/wait_for.h"

namespace tilestream {
namespace {

int BrokenReceive(int, mmsghdr*, unsigned, int, timespec*) {
  errno = ENOMEM;
  return -1;
}

// A socket that fails hard (here ENOMEM from recvmmsg, through the socket's
// seam) ends the tile's network thread after one call instead of spinning
// on it, and the error is in the tile's statistics for the report to say.
TEST(TileReceiver, AHardReceiveErrorEndsTheTilesThreadAndIsReported) {
  TileReceiverOptions o;
  o.assembler.tile = {64, 16};
  o.socket.bind_address = "127.0.0.1";
  o.socket.calls.recvmmsg = BrokenReceive;
  auto r = TileReceiver::Open(std::move(o));
  ASSERT_TRUE(r.ok()) << r.status().message();
  TileReceiver& tile = **r;
  EXPECT_TRUE(tile.Snapshot().receive_error.ok());
  tile.Start();
  ASSERT_TRUE(testing::WaitFor([&] { return !tile.Snapshot().receive_error.ok(); }));
  const TileReceiverStats st = tile.Snapshot();
  EXPECT_EQ(st.receive_error.error, ENOMEM);
  EXPECT_EQ(st.socket.syscalls, 1u);  // one call, no retries: the thread ended
  tile.Stop();
  EXPECT_EQ(tile.Snapshot().socket.syscalls, 1u);
}

}  // namespace
}  // namespace tilestream
