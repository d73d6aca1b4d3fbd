// A tile rank's side of the library's presence on a wall over several
// servers (common/control/library_presence.h): the first tile rank of each
// server looks at its library on a thread of its own every kPeriod and,
// from the rank's own loop, sends the coordinator the movies whose files
// for its server's tiles are whole whenever that list changes.
#pragma once

#include <mpi.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/wall/wall_config.h"

namespace tilestream {

class LibraryReporter {
 public:
  static constexpr std::chrono::seconds kPeriod{5};

  // A reporter for the rank streaming `tiles`, or null when it has none to
  // make (one server, no library, or not its server's first tile).
  static std::unique_ptr<LibraryReporter> For(const WallConfig& c,
                                              const std::vector<uint32_t>& tiles);
  ~LibraryReporter();

  // MPI's thread: sends the latest list if it changed and the last send
  // is done. Never blocks.
  void MaybeSend(MPI_Comm comm);
  // MPI's thread, before the rank's final report (the coordinator takes
  // messages until every final report is in): waits for the last send.
  void Finish();

 private:
  explicit LibraryReporter(const WallConfig& c);
  void Look();

  const WallConfig& config_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::string latest_;  // under mu_; the list last looked at
  // MPI's thread: the list being sent, or sent last (left to the process's
  // end if a send is still under way at destruction).
  std::unique_ptr<std::string> sending_ = std::make_unique<std::string>();
  MPI_Request request_ = MPI_REQUEST_NULL;
  bool sent_once_ = false;
  std::thread looker_;
};

}  // namespace tilestream
