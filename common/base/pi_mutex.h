// A mutex with priority inheritance, for data a real-time thread shares
// with normal ones (common/base/realtime.h).
//
// With a plain mutex a real-time thread that finds the lock taken waits
// for its holder, and on a busy machine that holder, at normal priority,
// may wait for a core for milliseconds: the receiver's presenter once took
// 20 ms to read one sync line that way. With PTHREAD_PRIO_INHERIT the
// holder runs at the waiter's priority until it lets go. Uncontended it
// costs what std::mutex does (one atomic operation in user space).
// Satisfies Lockable, so std::lock_guard and std::unique_lock take it.
#pragma once

#include <pthread.h>

namespace tilestream {

class PiMutex {
 public:
  PiMutex() {
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT);
    pthread_mutex_init(&mu_, &attr);
    pthread_mutexattr_destroy(&attr);
  }
  ~PiMutex() { pthread_mutex_destroy(&mu_); }
  PiMutex(const PiMutex&) = delete;
  PiMutex& operator=(const PiMutex&) = delete;

  void lock() { pthread_mutex_lock(&mu_); }
  bool try_lock() { return pthread_mutex_trylock(&mu_) == 0; }
  void unlock() { pthread_mutex_unlock(&mu_); }

 private:
  pthread_mutex_t mu_;
};

}  // namespace tilestream
