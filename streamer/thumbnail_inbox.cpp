#include "streamer/thumbnail_inbox.h"

#include <algorithm>

namespace tilestream {

void ThumbnailInbox::Drain(const Accept& accept) {
  for (;;) {
    if (request_ != MPI_REQUEST_NULL) {
      int done = 0;
      MPI_Test(&request_, &done, MPI_STATUS_IGNORE);
      if (!done) return;
      accept(from_, {buffer_.data(), bytes_});
    }
    int waiting = 0, bytes = 0;
    MPI_Message message;
    MPI_Status st;
    MPI_Improbe(MPI_ANY_SOURCE, tag_, comm_, &waiting, &message, &st);
    if (!waiting) return;
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    // Never bigger from this build; a receive too small would abort the job.
    bytes_ = static_cast<size_t>(std::max(bytes, 0));
    if (bytes_ > buffer_.size()) buffer_.resize(bytes_);
    from_ = st.MPI_SOURCE;
    MPI_Imrecv(buffer_.data(), bytes, MPI_BYTE, &message, &request_);
  }
}

void ThumbnailInbox::Finish(const Accept& accept) {
  if (request_ == MPI_REQUEST_NULL) return;
  MPI_Wait(&request_, MPI_STATUS_IGNORE);
  accept(from_, {buffer_.data(), bytes_});
}

}  // namespace tilestream
