// RunTimer: ends a run at its deadline (SessionOptions::run_timeout) without the
// run reading a clock. A thread of the Session's own sleeps until the deadline of
// the run in progress and then calls `expire`, which raises the executor's
// interrupt flag: the same flag Session::cancel raises, which the executor already
// tests between nodes, at loop back-edges and Call entries, and long kernels
// between their chunks. So a deadline lands as fast as a cancel, whatever the
// number of nodes, and the hot path pays nothing for it.
//
// Arming and disarming take a mutex and, in the steady state of back-to-back runs,
// no system call: the thread is woken only when it must wait for an earlier
// deadline than the one it sleeps towards (a first run, or a shorter timeout); a
// run that ends early leaves it asleep until that deadline, when it finds nothing
// armed and sleeps on. The thread starts on the first arm() and ends with the
// RunTimer. No state is shared between Sessions.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#if defined(__cpp_exceptions)
#include <thread>
#else
#include <pthread.h>
#endif

#include "stagegraph/status.h"

namespace sg::runtime {

class RunTimer {
 public:
  using Clock = std::chrono::steady_clock;
  // `expire(user)` runs on the timer's thread when an armed deadline passes.
  RunTimer(void (*expire)(void* user), void* user) : expire_(expire), user_(user) {}
  ~RunTimer();
  RunTimer(const RunTimer&) = delete;
  RunTimer& operator=(const RunTimer&) = delete;

  // The run starting now ends at `deadline`: expire runs once at it, unless
  // disarm() comes first. kOutOfMemory when the timer's thread cannot be started
  // (the first time only).
  Status arm(Clock::time_point deadline);
  // The run has ended: once this returns, expire does not run for it.
  void disarm();

 private:
  void wait_loop();
  Status start();
#if !defined(__cpp_exceptions)
  static void* thread_main(void* timer);
#endif

  void (*expire_)(void* user);
  void* user_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool armed_ = false;  // all under mutex_
  bool stop_ = false;
  Clock::time_point deadline_{};
  // What the thread sleeps towards: a deadline, or (idle) nothing.
  bool sleeping_idle_ = true;
  Clock::time_point sleeping_until_{};
  bool started_ = false;
#if defined(__cpp_exceptions)
  std::thread thread_;
#else
  pthread_t thread_{};
#endif
};

}  // namespace sg::runtime
