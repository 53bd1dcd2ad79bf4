// SpinTeam: the calling thread and `threads - 1` helpers that spin between tasks,
// so that forking work costs a few cache-line transfers instead of a system call.
// That is what lets a loop split a 1 x 256 -> 256 step (2 µs) over two cores: a
// pthreadpool fork-join costs 0.7-0.9 µs here (its futex wake), a job of two empty
// tasks on this team about 0.2 µs (bench/micro/RESULTS.md).
//
// One job at a time, published by a sequence number (odd while the caller writes
// it). The caller runs the first of `threads` equal runs of indices itself, with
// no atomic operation; each helper claims from its own run, then from the other
// helpers', with a compare-and-swap on a word that carries the job's number beside
// the next index (a helper that wakes late can never claim from a later job with an
// earlier job's task), and stores how many it ran in a word of its own, which the
// caller reads to know when all have run. A job moves few cache lines between
// cores: the job's own, which holds the claim words, and each helper's count. A
// helper that sees no job for kSpinNs parks on the sequence word (futex) until the
// next job; the caller never waits for a helper to arrive, it takes the runs
// nobody claimed.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#if !defined(__cpp_exceptions)
#include <pthread.h>
#endif

#include "interface/kernel.h"

namespace sg::runtime {

class SpinTeam final : public kernels::Team {
 public:
  // Null for 1 or more than kMaxThreads threads, or when a thread cannot be started
  // (the Session then uses a pool or one thread).
  static std::unique_ptr<SpinTeam> create(size_t threads);
  ~SpinTeam() override;
  SpinTeam(const SpinTeam&) = delete;
  SpinTeam& operator=(const SpinTeam&) = delete;

  size_t threads() const override { return threads_; }
  void run(Task task, void* context, size_t n) override;

  // The most threads a team takes: the job and every run's claim word share one
  // cache line. A Session with more threads uses a pool.
  static constexpr size_t kMaxThreads = 5;
  // How long a helper spins without work before it parks.
  static constexpr int64_t kSpinNs = 200'000;

 private:
  explicit SpinTeam(size_t threads);
  void help(size_t self);
#if !defined(__cpp_exceptions)
  static void* start(void* helper);
#endif
  // Claims and runs indices of job `tag` from the helpers' runs, `first` first;
  // returns how many it ran (`self`: the helper whose count it stores, 0: none).
  size_t claim(size_t first, size_t self, uint32_t tag, Task task, void* context, size_t n);

  // The job: one line, written by the caller, in which the helpers also claim.
  struct alignas(64) Board {
    std::atomic<uint32_t> seq{0};  // even: job seq published; odd: being written
    std::atomic<Task> task{nullptr};
    std::atomic<void*> context{nullptr};
    std::atomic<size_t> n{0};
    std::atomic<uint64_t> next[kMaxThreads - 1] = {};  // job number << 32 | next index of helper h + 1's run
  };
  struct alignas(64) Count {
    std::atomic<uint64_t> done{0};  // job number << 32 | tasks this helper ran in it
  };
  static_assert(sizeof(Board) == 64);

  const size_t threads_;
  Board board_;
  std::unique_ptr<Count[]> done_;  // [threads_], entry 0 unused
  alignas(64) std::atomic<uint32_t> parked_{0};
  std::atomic<bool> stop_{false};
#if defined(__cpp_exceptions)
  std::vector<std::thread> workers_;
#else
  // Built without exceptions (the size builds, mobile/CMakeLists.txt), std::thread
  // cannot report a helper that fails to start: the helpers are POSIX threads.
  struct Helper {
    SpinTeam* team = nullptr;
    size_t self = 0;
    pthread_t thread{};
  };
  Helper helpers_[kMaxThreads - 1];
  size_t started_ = 0;
#endif
};

}  // namespace sg::runtime
