// A mutex with priority inheritance (PTHREAD_PRIO_INHERIT), usable with std::lock_guard: while a
// real-time thread waits on it, the thread that holds it runs at the waiter's priority. Without
// it a real-time thread can wait for a normal one that a busy machine has preempted while it held
// the lock (priority inversion), for as long as the machine's other work keeps it off a CPU.
#pragma once

#include <pthread.h>

namespace pgwaitprof::base {

class InheritingMutex {
 public:
  InheritingMutex() {
    pthread_mutexattr_t attributes;
    pthread_mutexattr_init(&attributes);
    pthread_mutexattr_setprotocol(&attributes, PTHREAD_PRIO_INHERIT);
    pthread_mutex_init(&mutex_, &attributes);
    pthread_mutexattr_destroy(&attributes);
  }
  ~InheritingMutex() { pthread_mutex_destroy(&mutex_); }
  InheritingMutex(const InheritingMutex&) = delete;
  InheritingMutex& operator=(const InheritingMutex&) = delete;

  void lock() { pthread_mutex_lock(&mutex_); }
  void unlock() { pthread_mutex_unlock(&mutex_); }

 private:
  pthread_mutex_t mutex_;
};

}  // namespace pgwaitprof::base
