// Ending a run early: Session::cancel from another thread, a per-run timeout, and
// run() entered by a second thread. Each ends with its own code, names the source
// line the run stopped at, and leaves the Session usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>

#include "test_graphs.h"
#include "test_util.h"

namespace sg::testing {
namespace {

constexpr int64_t kForever = std::numeric_limits<int64_t>::max();

std::unique_ptr<Session> session_on(const GraphSpec& g, const std::string& entry, const SessionOptions& o = {}) {
  auto program = load_ok(g);
  if (program == nullptr) return nullptr;
  auto s = Session::create(program, entry, o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(s).value() : nullptr;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The while loop of total(n) never ends for n = 2^63 - 1 (in human time); after
// the run is stopped, total(10) runs to its answer on the same Session.
void expect_usable(Session& s) {
  ASSERT_TRUE(s.set_input("n", scalar_i64(10)).ok());
  const Status st = s.run();
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(values_of<int64_t>(s.output(0)), std::vector<int64_t>{45});
}

TEST(Interrupt, CancelFromAnotherThreadEndsAnEndlessLoop) {
  auto s = session_on(while_sum_graph(), "total");
  ASSERT_NE(s, nullptr);
  for (int round = 0; round < 2; ++round) {
    ASSERT_TRUE(s->set_input("n", scalar_i64(kForever)).ok());
    std::thread canceller([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      s->cancel();
    });
    const auto start = std::chrono::steady_clock::now();
    const Status st = s->run();
    canceller.join();
    EXPECT_EQ(st.code(), StatusCode::kCancelled) << st.message();
    EXPECT_LT(seconds_since(start), 10.0);
    // Stopped in the loop: its cond or body, or the While node itself.
    EXPECT_EQ(st.message().rfind("model.py:3:", 0), 0u) << st.message();
    EXPECT_NE(st.message().find("cancelled"), std::string::npos) << st.message();
    EXPECT_EQ(s->output(0).status().code(), StatusCode::kInvalidArgument);
    expect_usable(*s);
  }
}

TEST(Interrupt, CancelBeforeARunEndsThatRunOnly) {
  auto s = session_on(while_sum_graph(), "total");
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->set_input("n", scalar_i64(10)).ok());
  s->cancel();
  const Status st = s->run();
  EXPECT_EQ(st.code(), StatusCode::kCancelled);
  EXPECT_NE(st.message().find("before it started"), std::string::npos) << st.message();
  expect_usable(*s);  // the request ended with that run
}

TEST(Interrupt, TimeoutEndsAnEndlessLoop) {
  SessionOptions o;
  o.run_timeout = std::chrono::milliseconds(20);
  auto s = session_on(while_sum_graph(), "total", o);
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->set_input("n", scalar_i64(kForever)).ok());
  const auto start = std::chrono::steady_clock::now();
  const Status st = s->run();
  const double took = seconds_since(start);
  EXPECT_EQ(st.code(), StatusCode::kDeadlineExceeded) << st.message();
  EXPECT_GE(took, 0.019);
  EXPECT_LT(took, 10.0);
  EXPECT_EQ(st.message().rfind("model.py:3:", 0), 0u) << st.message();
  EXPECT_NE(st.message().find("20000 us"), std::string::npos) << st.message();
  // A run that fits its timeout succeeds; then no timeout at all.
  expect_usable(*s);
  ASSERT_TRUE(s->set_run_timeout(std::chrono::microseconds(0)).ok());
  expect_usable(*s);
  EXPECT_EQ(s->set_run_timeout(std::chrono::microseconds(-1)).code(), StatusCode::kInvalidArgument);
}

TEST(Interrupt, TimeoutStopsARecursionAtACall) {
  // rec(n) = n + rec(n - 1): deep enough to outlast the timeout by far.
  SessionOptions o;
  o.run_timeout = std::chrono::milliseconds(10);
  o.max_call_depth = std::numeric_limits<int>::max();
  auto s = session_on(recursive_graph("add", 0, 0), "rec", o);
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->set_input("n", scalar_i64(kForever)).ok());
  const Status st = s->run();
  EXPECT_EQ(st.code(), StatusCode::kDeadlineExceeded) << st.message();
  EXPECT_EQ(st.message().rfind("model.py:2:", 0), 0u) << st.message();
  ASSERT_TRUE(s->set_input("n", scalar_i64(4)).ok());
  ASSERT_TRUE(s->run().ok());
  EXPECT_EQ(values_of<int64_t>(s->output(0)), std::vector<int64_t>{10});
}

// def product(a: f32["M", 1024], b: f32[1024, 1024]): return a @ b -- one node,
// one long kernel (b is an input: the run-time GEMM, or the reference kernel).
GraphSpec product_graph() {
  GraphSpec g;
  g.symbols = {"M"};
  FunctionSpec f;
  f.name = "product";
  const uint32_t a = f.param(DType::kF32, {sym(0), {1024, -1}});
  const uint32_t b = f.param(DType::kF32, shape({1024, 1024}));
  const uint32_t c = f.op("matmul", {a, b}, DType::kF32, {sym(0), {1024, -1}}, 2, 12);
  f.results = {c};
  g.add_entry("product", g.add_function(std::move(f)), {"a", "b"}, {"output_0"});
  return g;
}

Tensor filled(std::vector<int64_t> dims, float v) {
  Tensor t = Tensor::empty(DType::kF32, dims).value();
  std::fill(t.data_as<float>(), t.data_as<float>() + t.numel(), v);
  return t;
}

// Seconds a whole product of `rows` rows takes on `s`, from one of rows / 16
// (cheap where the reference kernel runs it, as under qemu).
double whole_product_seconds(Session& s, int64_t rows) {
  EXPECT_TRUE(s.set_input("a", filled({rows / 16, 1024}, 0.5f)).ok());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(s.run().ok());
  return 16 * seconds_since(start);
}

constexpr int64_t kProductRows = 8192;  // 17 GFLOP

// A run of one node honours its timeout (it used to be read every 1,024 nodes,
// so a run of fewer never looked), and the deadline lands inside the kernel,
// which stops between the blocks of rows it splits its work into.
TEST(Interrupt, DeadlineEndsARunOfOneLongKernel) {
  auto s = session_on(product_graph(), "product");
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->set_input("b", filled({1024, 1024}, 0.25f)).ok());
  const double whole = whole_product_seconds(*s, kProductRows);
  ASSERT_TRUE(s->set_input("a", filled({kProductRows, 1024}, 0.5f)).ok());
  ASSERT_TRUE(s->set_run_timeout(std::chrono::milliseconds(10)).ok());
  const auto start = std::chrono::steady_clock::now();
  const Status st = s->run();
  const double took = seconds_since(start);
  EXPECT_EQ(st.code(), StatusCode::kDeadlineExceeded) << st.message();
  EXPECT_NE(st.message().find("model.py:2:12: "), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("stopped in 'matmul'"), std::string::npos) << st.message();
  EXPECT_GE(took, 0.0099);
  EXPECT_LT(took, 0.01 + whole / 4) << "the whole product takes about " << whole << " s";
  // The next run, with time enough, gives the product.
  ASSERT_TRUE(s->set_run_timeout(std::chrono::seconds(600)).ok());
  ASSERT_TRUE(s->set_input("a", filled({8, 1024}, 0.5f)).ok());
  ASSERT_TRUE(s->run().ok());
  EXPECT_EQ(values_of<float>(s->output(0))[0], 128.0f);
}

TEST(Interrupt, CancelLandsInsideALongKernel) {
  for (const int threads : {1, 2}) {
    SessionOptions o;
    o.num_threads = threads;
    auto s = session_on(product_graph(), "product", o);
    ASSERT_NE(s, nullptr);
    ASSERT_TRUE(s->set_input("b", filled({1024, 1024}, 0.25f)).ok());
    const double whole = whole_product_seconds(*s, kProductRows);
    ASSERT_TRUE(s->set_input("a", filled({kProductRows, 1024}, 0.5f)).ok());
    std::chrono::steady_clock::time_point cancelled_at;
    std::thread canceller([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      cancelled_at = std::chrono::steady_clock::now();
      s->cancel();
    });
    const Status st = s->run();
    const auto ended = std::chrono::steady_clock::now();
    canceller.join();
    EXPECT_EQ(st.code(), StatusCode::kCancelled) << st.message();
    EXPECT_NE(st.message().find("stopped in 'matmul'"), std::string::npos) << st.message();
    EXPECT_LT(std::chrono::duration<double>(ended - cancelled_at).count(), whole / 4)
        << threads << " threads; the whole product takes about " << whole << " s";
  }
}

TEST(Interrupt, RunEnteredByASecondThreadIsAnError) {
  // The timeout bounds the test should the second run start first.
  SessionOptions o;
  o.run_timeout = std::chrono::seconds(20);
  auto s = session_on(while_sum_graph(), "total", o);
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->set_input("n", scalar_i64(kForever)).ok());
  Status first;
  std::thread runner([&] { first = s->run(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const Status second = s->run();
  EXPECT_EQ(second.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(second.message().find("in progress"), std::string::npos) << second.message();
  EXPECT_EQ(s->set_input("n", scalar_i64(1)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s->set_run_timeout(std::chrono::microseconds(5)).code(), StatusCode::kInvalidArgument);
  s->cancel();
  runner.join();
  EXPECT_EQ(first.code(), StatusCode::kCancelled) << first.message();
  expect_usable(*s);
}

}  // namespace
}  // namespace sg::testing
