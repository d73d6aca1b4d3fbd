#include "common/base/realtime.h"

#include <pthread.h>
#include <sched.h>

#include <string>

namespace tilestream {

Status RunCallingThreadRealTime(int priority) {
  if (priority < sched_get_priority_min(SCHED_FIFO) ||
      priority > sched_get_priority_max(SCHED_FIFO))
    return Status::InvalidArgument("SCHED_FIFO priority " + std::to_string(priority) +
                                   " is out of range");
  const sched_param param{.sched_priority = priority};
  if (const int err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param); err != 0)
    return Status::IoError("SCHED_FIFO at priority " + std::to_string(priority), err);
  return Status::Ok();
}

}  // namespace tilestream
