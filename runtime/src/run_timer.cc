#include "run_timer.h"

#include <cstring>
#include <string>

#if defined(__cpp_exceptions)
#include <system_error>
#endif

namespace sg::runtime {

RunTimer::~RunTimer() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!started_) return;
    stop_ = true;
  }
  wake_.notify_one();
#if defined(__cpp_exceptions)
  thread_.join();
#else
  pthread_join(thread_, nullptr);
#endif
}

// Called with mutex_ held: the thread waits for it before it looks at anything.
Status RunTimer::start() {
#if defined(__cpp_exceptions)
  try {
    thread_ = std::thread(&RunTimer::wait_loop, this);
  } catch (const std::system_error& e) {
    return out_of_memory(std::string("cannot start the thread that ends runs at their timeout: ") + e.what());
  }
#else
  if (const int err = pthread_create(&thread_, nullptr, &RunTimer::thread_main, this); err != 0)
    return out_of_memory(std::string("cannot start the thread that ends runs at their timeout: ") +
                         std::strerror(err));
#endif
  started_ = true;
  return Status::Ok();
}

#if !defined(__cpp_exceptions)
void* RunTimer::thread_main(void* timer) {
  static_cast<RunTimer*>(timer)->wait_loop();
  return nullptr;
}
#endif

Status RunTimer::arm(Clock::time_point deadline) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!started_) SG_RETURN_IF_ERROR(start());
    armed_ = true;
    deadline_ = deadline;
    // A thread asleep towards an earlier deadline finds this one when it wakes.
    wake = sleeping_idle_ || deadline < sleeping_until_;
  }
  if (wake) wake_.notify_one();
  return Status::Ok();
}

void RunTimer::disarm() {
  std::lock_guard<std::mutex> lock(mutex_);
  armed_ = false;
}

void RunTimer::wait_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    if (!armed_) {
      sleeping_idle_ = true;
      wake_.wait(lock);
      continue;
    }
    if (Clock::now() >= deadline_) {
      // Under the lock: a disarm() that returned before this cannot be overtaken.
      armed_ = false;
      expire_(user_);
      continue;
    }
    sleeping_idle_ = false;
    sleeping_until_ = deadline_;
    wake_.wait_until(lock, sleeping_until_);
  }
}

}  // namespace sg::runtime
