// myabsl/synchronization/mutex.h — a mutex the thread-safety analysis knows.
#ifndef MYABSL_SYNCHRONIZATION_MUTEX_H_
#define MYABSL_SYNCHRONIZATION_MUTEX_H_

#include <mutex>

#include "myabsl/base/config.h"
#include "myabsl/base/thread_annotations.h"

namespace myabsl {
MYABSL_NAMESPACE_BEGIN

class CAPABILITY("mutex") Mutex {
 public:
  void Lock() EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() UNLOCK_FUNCTION() { mu_.unlock(); }

 private:
  std::mutex mu_;
};

class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_->Lock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;
  ~MutexLock() UNLOCK_FUNCTION() { mu_->Unlock(); }

 private:
  Mutex* const mu_;
};

MYABSL_NAMESPACE_END
}  // namespace myabsl

#endif  // MYABSL_SYNCHRONIZATION_MUTEX_H_
