#include "team.h"

#include <chrono>
#include <new>
#if defined(__cpp_exceptions)
#include <system_error>
#endif

namespace sg::runtime {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

SpinTeam::SpinTeam(size_t threads) : threads_(threads), done_(new Count[threads]) {}

std::unique_ptr<SpinTeam> SpinTeam::create(size_t threads) {
  if (threads < 2 || threads > kMaxThreads) return nullptr;
  std::unique_ptr<SpinTeam> team(new (std::nothrow) SpinTeam(threads));
  if (!team) return nullptr;
#if defined(__cpp_exceptions)
  try {
    team->workers_.reserve(threads - 1);
    for (size_t t = 1; t < threads; ++t) team->workers_.emplace_back(&SpinTeam::help, team.get(), t);
  } catch (const std::system_error&) {
    return nullptr;  // the destructor stops and joins the helpers already started
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
#else
  for (size_t t = 1; t < threads; ++t) {
    SpinTeam::Helper& h = team->helpers_[t - 1];
    h.team = team.get();
    h.self = t;
    if (pthread_create(&h.thread, nullptr, &SpinTeam::start, &h) != 0) return nullptr;  // as above
    team->started_ = t;
  }
#endif
  return team;
}

#if !defined(__cpp_exceptions)
void* SpinTeam::start(void* helper) {
  const Helper& h = *static_cast<const Helper*>(helper);
  h.team->help(h.self);
  return nullptr;
}
#endif

SpinTeam::~SpinTeam() {
  stop_.store(true, std::memory_order_seq_cst);
  board_.seq.fetch_add(2, std::memory_order_seq_cst);
  board_.seq.notify_all();
#if defined(__cpp_exceptions)
  for (std::thread& t : workers_) t.join();
#else
  for (size_t t = 0; t < started_; ++t) pthread_join(helpers_[t].thread, nullptr);
#endif
}

size_t SpinTeam::claim(size_t first, size_t self, uint32_t tag, Task task, void* context, size_t n) {
  size_t ran = 0;
  for (size_t k = 0; k + 1 < threads_; ++k) {
    const size_t h = 1 + (first - 1 + k) % (threads_ - 1);
    const uint64_t end = uint64_t(n * (h + 1) / threads_);
    std::atomic<uint64_t>& next = board_.next[h - 1];
    uint64_t word = next.load(std::memory_order_acquire);
    while (uint32_t(word >> 32) == tag && (word & 0xffffffffu) < end) {
      if (!next.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel, std::memory_order_acquire))
        continue;
      task(context, size_t(word & 0xffffffffu));
      ++ran;
      if (self != 0) done_[self].done.store(uint64_t(tag) << 32 | ran, std::memory_order_release);
      word = next.load(std::memory_order_acquire);
    }
    if (uint32_t(word >> 32) != tag) break;  // a later job: this one is over
  }
  return ran;
}

void SpinTeam::run(Task task, void* context, size_t n) {
  if (n == 0) return;
  if (n == 1 || n > 0xffffffffu) {
    for (size_t i = 0; i < n; ++i) task(context, i);
    return;
  }
  const uint32_t odd = board_.seq.load(std::memory_order_relaxed) + 1;
  const uint32_t tag = odd + 1;
  board_.seq.store(odd, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  // The runs first: a helper still holding the previous job's number now fails
  // every claim, whatever it reads of the fields below.
  for (size_t h = 1; h < threads_; ++h)
    board_.next[h - 1].store(uint64_t(tag) << 32 | uint64_t(n * h / threads_), std::memory_order_relaxed);
  board_.task.store(task, std::memory_order_relaxed);
  board_.context.store(context, std::memory_order_relaxed);
  board_.n.store(n, std::memory_order_relaxed);
  board_.seq.store(tag, std::memory_order_release);
  // Without a full fence this may miss a helper that is just parking: it then
  // sleeps through this job (which the caller finishes alone) until the next.
  if (parked_.load(std::memory_order_relaxed) != 0) board_.seq.notify_all();
  const size_t own = n / threads_;
  for (size_t i = 0; i < own; ++i) task(context, i);
  const size_t left = n - own - claim(1, 0, tag, task, context, n);
  // What the helpers claimed: wait until they have run it. A helper the system
  // took off its core mid-task may need this one: after 16k spins (about 1 ms with
  // x86's 140-cycle pause), give the core up between checks.
  for (uint32_t spins = 0;; ++spins) {
    size_t ran = 0;
    for (size_t h = 1; h < threads_; ++h) {
      const uint64_t word = done_[h].done.load(std::memory_order_acquire);
      if (uint32_t(word >> 32) == tag) ran += size_t(word & 0xffffffffu);
    }
    if (ran >= left) return;
    if (spins < (1u << 14)) cpu_relax();
    else std::this_thread::yield();
  }
}

void SpinTeam::help(size_t self) {
  uint32_t seen = board_.seq.load(std::memory_order_acquire);
  int64_t idle_since = now_ns();
  for (uint32_t spins = 0;; ++spins) {
    const uint32_t s = board_.seq.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_relaxed)) return;
    if (s == seen || (s & 1) != 0) {
      if ((spins & 255) != 255) {
        cpu_relax();
        continue;
      }
      if (now_ns() - idle_since < kSpinNs) continue;
      parked_.fetch_add(1, std::memory_order_seq_cst);
      if (board_.seq.load(std::memory_order_seq_cst) == s && !stop_.load(std::memory_order_seq_cst))
        board_.seq.wait(s, std::memory_order_seq_cst);
      parked_.fetch_sub(1, std::memory_order_seq_cst);
      idle_since = now_ns();
      continue;
    }
    // A job: read it, then check that it was not replaced while being read.
    const Task task = board_.task.load(std::memory_order_relaxed);
    void* const context = board_.context.load(std::memory_order_relaxed);
    const size_t n = board_.n.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (board_.seq.load(std::memory_order_relaxed) != s) continue;
    seen = s;
    claim(self, self, s, task, context, n);
    idle_since = now_ns();
  }
}

}  // namespace sg::runtime
