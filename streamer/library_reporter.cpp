#include "streamer/library_reporter.h"

#include <algorithm>

#include "common/control/library_presence.h"
#include "common/control/movie_listing.h"
#include "common/store/movie_library.h"
#include "streamer/messages.h"

namespace tilestream {

std::unique_ptr<LibraryReporter> LibraryReporter::For(const WallConfig& c,
                                                      const std::vector<uint32_t>& tiles) {
  if (!c.several_servers() || c.library_path.empty() || tiles.empty()) return nullptr;
  const uint32_t lowest = *std::min_element(tiles.begin(), tiles.end());
  const uint32_t server = c.routes[lowest].server;
  for (uint32_t t = 0; t < lowest; ++t)
    if (c.routes[t].server == server) return nullptr;  // a lower tile's rank reports
  return std::unique_ptr<LibraryReporter>(new LibraryReporter(c));
}

LibraryReporter::LibraryReporter(const WallConfig& c) : config_(c) {
  looker_ = std::thread([this] { Look(); });
}

LibraryReporter::~LibraryReporter() {
  {
    const std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  looker_.join();
  if (request_ != MPI_REQUEST_NULL) {  // the coordinator is gone: the job is ending
    MPI_Request_free(&request_);
    static_cast<void>(sending_.release());
  }
}

void LibraryReporter::Finish() {
  if (request_ != MPI_REQUEST_NULL) MPI_Wait(&request_, MPI_STATUS_IGNORE);
}

void LibraryReporter::Look() {
  const auto here = TilesOnThisHost(config_);
  std::unique_lock lock(mu_);
  while (!stop_) {
    lock.unlock();
    auto library = ScanLibrary(config_.library_path, config_.wall, here);
    std::string names = library.ok() ? PresentMovies(*library) : "";
    lock.lock();
    latest_ = std::move(names);
    wake_.wait_for(lock, kPeriod, [this] { return stop_; });
  }
}

void LibraryReporter::MaybeSend(MPI_Comm comm) {
  if (request_ != MPI_REQUEST_NULL) {
    int done = 0;
    MPI_Test(&request_, &done, MPI_STATUS_IGNORE);
    if (!done) return;
  }
  {
    const std::lock_guard lock(mu_);
    if (sent_once_ && latest_ == *sending_) return;
    *sending_ = latest_;
  }
  sent_once_ = true;
  MPI_Isend(sending_->data(), static_cast<int>(sending_->size()), MPI_BYTE, 0, kTagLibrary, comm,
            &request_);
}

}  // namespace tilestream
