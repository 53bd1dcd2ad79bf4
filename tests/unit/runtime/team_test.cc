// SpinTeam (runtime/src/team.h): every index of a job runs exactly once, its
// writes are visible when run returns, helpers take part, a parked helper wakes for
// the next job, and the team stops cleanly whether its helpers spin or sleep.
#include "team.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace sg::runtime {
namespace {

struct Counts {
  std::vector<std::atomic<int>> runs;
  explicit Counts(size_t n) : runs(n) {}
};

void count(void* context, size_t i) { static_cast<Counts*>(context)->runs[i].fetch_add(1); }

TEST(SpinTeam, TakesTwoToFiveThreads) {
  EXPECT_EQ(SpinTeam::create(0), nullptr);
  EXPECT_EQ(SpinTeam::create(1), nullptr);
  EXPECT_EQ(SpinTeam::create(SpinTeam::kMaxThreads + 1), nullptr);
  for (size_t t = 2; t <= SpinTeam::kMaxThreads; ++t) {
    auto team = SpinTeam::create(t);
    ASSERT_NE(team, nullptr) << t;
    EXPECT_EQ(team->threads(), t);
  }
}

TEST(SpinTeam, RunsEveryIndexExactlyOnce) {
  for (size_t threads : {size_t(2), size_t(3), SpinTeam::kMaxThreads}) {
    auto team = SpinTeam::create(threads);
    ASSERT_NE(team, nullptr);
    for (size_t n : {0, 1, 2, 3, 5, 7, 64, 1001}) {
      for (int job = 0; job < 50; ++job) {
        Counts c(n);
        team->run(count, &c, n);
        for (size_t i = 0; i < n; ++i)
          ASSERT_EQ(c.runs[i].load(), 1) << threads << " threads, n " << n << ", index " << i;
      }
    }
  }
}

// Plain (non-atomic) writes by the tasks, read by the caller after run: the
// hand-off orders them. Back to back, so a helper still finishing one job's
// bookkeeping meets the next job's.
TEST(SpinTeam, WritesOfEveryTaskAreSeenWhenRunReturns) {
  auto team = SpinTeam::create(2);
  ASSERT_NE(team, nullptr);
  struct Job {
    std::vector<uint64_t> out;
    uint64_t round;
  } job{std::vector<uint64_t>(4), 0};
  const auto task = [](void* context, size_t i) {
    Job& j = *static_cast<Job*>(context);
    j.out[i] = j.round * 4 + i;
  };
  for (uint64_t round = 1; round <= 100000; ++round) {
    job.round = round;
    team->run(task, &job, job.out.size());
    for (size_t i = 0; i < job.out.size(); ++i) ASSERT_EQ(job.out[i], round * 4 + i) << "round " << round;
  }
}

struct Where {
  std::thread::id caller;
  std::atomic<int> on_helpers{0};
};

void note_thread(void* context, size_t) {
  Where& w = *static_cast<Where*>(context);
  if (std::this_thread::get_id() != w.caller) w.on_helpers.fetch_add(1);
  // Long enough (50 µs) that the caller cannot finish both runs before a helper
  // that is awake arrives.
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
  while (std::chrono::steady_clock::now() < until) {
  }
}

// True when some task of up to `tries` two-task jobs ran on a helper. A loaded
// machine may keep the helper off a core for a while, not for 2,000 jobs (100 ms).
bool helper_took_part(SpinTeam& team, int tries) {
  Where w;
  w.caller = std::this_thread::get_id();
  for (int k = 0; k < tries && w.on_helpers.load() == 0; ++k) team.run(note_thread, &w, 2);
  return w.on_helpers.load() > 0;
}

TEST(SpinTeam, HelpersTakeTheirRun) {
  auto team = SpinTeam::create(2);
  ASSERT_NE(team, nullptr);
  EXPECT_TRUE(helper_took_part(*team, 2000));
}

TEST(SpinTeam, AParkedHelperWakesForTheNextJob) {
  auto team = SpinTeam::create(2);
  ASSERT_NE(team, nullptr);
  Counts c(2);
  team->run(count, &c, 2);
  // Well past the spin time: the helper is asleep on the futex now.
  std::this_thread::sleep_for(std::chrono::nanoseconds(SpinTeam::kSpinNs) * 20);
  EXPECT_TRUE(helper_took_part(*team, 2000));
}

TEST(SpinTeam, StopsWhileSpinningAndWhileParked) {
  for (bool park : {false, true}) {
    auto team = SpinTeam::create(3);
    ASSERT_NE(team, nullptr);
    Counts c(9);
    team->run(count, &c, 9);
    if (park) std::this_thread::sleep_for(std::chrono::nanoseconds(SpinTeam::kSpinNs) * 20);
    team.reset();  // joins its helpers; a hang here fails the test by timeout
    for (auto& r : c.runs) EXPECT_EQ(r.load(), 1);
  }
}

}  // namespace
}  // namespace sg::runtime
