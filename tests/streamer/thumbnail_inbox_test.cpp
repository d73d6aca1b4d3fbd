// ThumbnailInbox under mpirun: rank 1 sends a thumbnail-sized message and
// then makes no MPI call for 1.5 s, as a tile rank asleep on its doorbell;
// rank 0 drains its inbox meanwhile, as the coordinator between ticks.
// Over shared memory without single-copy support the message cannot move
// until rank 1 calls MPI again: a blocking receive waits the 1.5 s out.
// The test binary is its own helper: under mpirun it runs the two ranks.
#include "streamer/thumbnail_inbox.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/built_paths.h"
#include "tests/support/shell.h"
#include "tests/support/temp_dir.h"

namespace tilestream {
namespace {

constexpr int kTag = 7;
constexpr size_t kBytes = 48'012;  // a 160x100 thumbnail and its header
constexpr auto kSilence = std::chrono::milliseconds(1500);

std::byte Pattern(size_t i) { return std::byte((i * 7 + 3) & 0xff); }

int RunRanks() {
  MPI_Init(nullptr, nullptr);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 1) {
    std::vector<std::byte> message(kBytes);
    for (size_t i = 0; i < kBytes; ++i) message[i] = Pattern(i);
    MPI_Request request;
    MPI_Isend(message.data(), kBytes, MPI_BYTE, 0, kTag, MPI_COMM_WORLD, &request);
    std::this_thread::sleep_for(kSilence);  // no MPI call
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else {
    ThumbnailInbox inbox(MPI_COMM_WORLD, kTag, kBytes);
    int accepted = 0, intact = 0;
    auto accept = [&](int from, std::span<const std::byte> m) {
      ++accepted;
      bool same = from == 1 && m.size() == kBytes;
      for (size_t i = 0; same && i < m.size(); ++i) same = m[i] == Pattern(i);
      intact += same;
    };
    using Clock = std::chrono::steady_clock;
    const auto give_up = Clock::now() + std::chrono::seconds(30);
    Clock::duration longest{};
    while (accepted == 0 && Clock::now() < give_up) {
      const auto start = Clock::now();
      inbox.Drain(accept);
      longest = std::max(longest, Clock::now() - start);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    inbox.Finish(accept);
    std::printf("accepted %d intact %d longest_drain_ms %lld\n", accepted, intact,
                static_cast<long long>(
                    std::chrono::duration_cast<std::chrono::milliseconds>(longest).count()));
  }
  MPI_Finalize();
  return 0;
}

void ExpectDrainNeverWaits(const std::string& mca) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe");
  const testing::TempDir dir;
  const testing::ProcessResult r =
      testing::Shell(mca + " timeout 60 " + MPIRUN_PATH + " -n 2 --oversubscribe " + self, dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  int accepted = 0, intact = 0;
  long long longest = -1;
  const size_t at = r.output.find("accepted ");
  ASSERT_NE(at, std::string::npos) << r.output;
  ASSERT_EQ(std::sscanf(r.output.c_str() + at, "accepted %d intact %d longest_drain_ms %lld",
                        &accepted, &intact, &longest),
            3)
      << r.output;
  EXPECT_EQ(accepted, 1) << r.output;
  EXPECT_EQ(intact, 1) << r.output;
  // A loaded machine delays a call by a scheduling slice, never by the 1.5 s.
  EXPECT_LT(longest, 700) << r.output;
}

TEST(ThumbnailInbox, OverSharedMemoryWithoutSingleCopyADrainNeverWaitsForTheSender) {
  ExpectDrainNeverWaits("OMPI_MCA_btl_vader_single_copy_mechanism=none");
}

}  // namespace
}  // namespace tilestream

int main(int argc, char** argv) {
  if (std::getenv("OMPI_COMM_WORLD_SIZE")) return tilestream::RunRanks();
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
