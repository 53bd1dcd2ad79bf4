// If, While and Call: results, the heap frame stack (deep recursion on a thread
// with a 64 KiB stack), and the recursion depth limit.
#include <gtest/gtest.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "test_graphs.h"
#include "test_util.h"

namespace sg::testing {
namespace {

Result<int64_t> run_scalar(const std::shared_ptr<const Program>& program, const std::string& entry, int64_t n,
                           const SessionOptions& options = {}) {
  auto s = Session::create(program, entry, options);
  if (!s.ok()) return s.status();
  SG_RETURN_IF_ERROR((*s)->set_input("n", scalar_i64(n)));
  SG_RETURN_IF_ERROR((*s)->run());
  SG_ASSIGN_OR_RETURN(const Tensor out, (*s)->output(0));
  if (out.dtype() != DType::kI64 || out.rank() != 0) return internal_error("unexpected result type");
  return *out.data_as<int64_t>();
}

TEST(ControlFlow, WhileSumsBelowN) {
  auto program = load_ok(while_sum_graph());
  ASSERT_NE(program, nullptr);
  for (int64_t n : {0, 1, 2, 10, 1000}) {
    auto r = run_scalar(program, "total", n);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(*r, n * (n - 1) / 2) << "n = " << n;
  }
  auto negative = run_scalar(program, "total", -5);  // the loop runs zero times
  ASSERT_TRUE(negative.ok());
  EXPECT_EQ(*negative, 0);
}

TEST(ControlFlow, RecursiveFactorialThroughIfAndCall) {
  auto program = load_ok(recursive_graph("mul", 1, 1));
  ASSERT_NE(program, nullptr);
  int64_t expected = 1;
  for (int64_t n = 1; n <= 20; ++n) {
    expected *= n;
    auto r = run_scalar(program, "rec", n);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(*r, expected) << "n = " << n;
  }
  EXPECT_EQ(*run_scalar(program, "rec", 0), 1);
}

TEST(ControlFlow, RecursionDepthLimitNamesFunctionAndDepth) {
  auto program = load_ok(recursive_graph("add", 0, 0));
  ASSERT_NE(program, nullptr);
  SessionOptions options;
  options.max_call_depth = 10;
  // rec(n) makes n nested calls: 10 fit, 11 do not.
  auto fits = run_scalar(program, "rec", 10, options);
  ASSERT_TRUE(fits.ok()) << fits.status().message();
  EXPECT_EQ(*fits, 55);
  auto deep = run_scalar(program, "rec", 11, options);
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().code(), StatusCode::kLimitExceeded);
  EXPECT_EQ(deep.status().message(), "model.py:2:5: error: recursion depth limit 10 exceeded calling 'rec'");
  // The default limit is 10,000 active Call frames.
  auto too_deep = run_scalar(program, "rec", 10001);
  ASSERT_FALSE(too_deep.ok());
  EXPECT_NE(too_deep.status().message().find("recursion depth limit 10000 exceeded calling 'rec'"),
            std::string::npos);
  // A session recovers after the error.
  EXPECT_EQ(*run_scalar(program, "rec", 3, options), 6);
}

// Host memory that runs out after `budget` bytes live at once.
class BudgetAllocator final : public Allocator {
 public:
  explicit BudgetAllocator(size_t budget) : budget_(budget) {}
  void* allocate(size_t bytes, size_t alignment) override {
    if (live_ + bytes > budget_) return nullptr;
    live_ += bytes;
    return default_allocator()->allocate(bytes, alignment);
  }
  void deallocate(void* p, size_t bytes, size_t alignment) override {
    live_ -= bytes;
    default_allocator()->deallocate(p, bytes, alignment);
  }

 private:
  size_t budget_, live_ = 0;
};

// Frames that exhaust host memory fail the run with the Call's location, as a
// tensor that does not fit would: the executor asks its allocator before growing.
TEST(ControlFlow, RecursionThatExhaustsMemoryFailsTheRun) {
  auto program = load_ok(recursive_graph("add", 0, 0));
  ASSERT_NE(program, nullptr);
  BudgetAllocator host(size_t(4) << 20);
  SessionOptions options;
  options.max_call_depth = 1 << 30;
  options.allocator = &host;
  auto deep = run_scalar(program, "rec", int64_t(1) << 24, options);
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().code(), StatusCode::kOutOfMemory);
  EXPECT_NE(deep.status().message().find("model.py:2:5: error: out of memory"), std::string::npos)
      << deep.status().message();
  EXPECT_NE(deep.status().message().find("calling 'rec'"), std::string::npos) << deep.status().message();
}

struct DeepRun {
  std::shared_ptr<const Program> program;
  int64_t n = 0;
  Status status;
  int64_t result = 0;
};

void* deep_run_main(void* arg) {
  auto* run = static_cast<DeepRun*>(arg);
  auto r = run_scalar(run->program, "rec", run->n);
  if (r.ok())
    run->result = *r;
  else
    run->status = r.status();
  return nullptr;
}

// 9,999 nested graph calls on a thread whose C++ stack is 64 KiB (or the platform's
// minimum where that is larger: 128 KiB on aarch64 Linux): only possible if graph
// calls do not recurse in C++.
TEST(ControlFlow, DeepRecursionUsesNoCxxStack) {
  DeepRun run;
  run.program = load_ok(recursive_graph("add", 0, 0));
  ASSERT_NE(run.program, nullptr);
  run.n = 9999;
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  const size_t stack = std::max<size_t>(64 * 1024, size_t(sysconf(_SC_THREAD_STACK_MIN)));
  ASSERT_EQ(pthread_attr_setstacksize(&attr, stack), 0);
  pthread_t thread;
  ASSERT_EQ(pthread_create(&thread, &attr, deep_run_main, &run), 0);
  ASSERT_EQ(pthread_join(thread, nullptr), 0);
  pthread_attr_destroy(&attr);
  ASSERT_TRUE(run.status.ok()) << run.status.message();
  EXPECT_EQ(run.result, int64_t(9999) * 10000 / 2);
}

TEST(ControlFlow, ProfileCountsControlFlowNodes) {
  auto program = load_ok(while_sum_graph());
  ASSERT_NE(program, nullptr);
  SessionOptions options;
  options.profile = true;
  auto s = Session::create(program, "total", options).value();
  ASSERT_TRUE(s->set_input("n", scalar_i64(4)).ok());
  ASSERT_TRUE(s->run().ok());
  uint64_t while_calls = 0, less_calls = 0, add_calls = 0;
  for (const NodeProfile& p : s->profile()) {
    if (p.op == "while") while_calls += p.calls;
    if (p.op == "less") less_calls += p.calls;
    if (p.op == "add") add_calls += p.calls;
  }
  EXPECT_EQ(while_calls, 1u);
  EXPECT_EQ(less_calls, 5u);  // four true tests and the final false one
  EXPECT_EQ(add_calls, 8u);
}

TEST(ControlFlow, FunctionInfoForInspection) {
  auto program = load_ok(recursive_graph("mul", 1, 1));
  ASSERT_NE(program, nullptr);
  const std::vector<FunctionInfo> fns = program->functions();
  ASSERT_EQ(fns.size(), 3u);
  EXPECT_EQ(fns[0].name, "rec");
  EXPECT_EQ(fns[0].num_nodes, 2u);
  EXPECT_EQ(fns[0].op_counts, (std::vector<std::pair<std::string, size_t>>{{"if", 1}, {"less_equal", 1}}));
  ASSERT_EQ(fns[0].edges.size(), 2u);
  EXPECT_EQ(fns[0].edges[0].kind, "if-then");
  EXPECT_EQ(fns[0].edges[0].function, 1u);
  EXPECT_EQ(fns[0].edges[1].kind, "if-else");
  ASSERT_EQ(fns[2].edges.size(), 1u);
  EXPECT_EQ(fns[2].edges[0].kind, "call");
  EXPECT_EQ(fns[2].edges[0].function, 0u);
  EXPECT_EQ(program->constant_bytes(), 24u);
}

// pick_graph() declares its If's result f32[4], so neg is planned for [4] before
// the If runs; a branch that returns another shape is an error naming the If, not a
// read past the end of the row.
TEST(ControlFlow, ResultOfAnotherShapeThanDeclaredIsAnError) {
  auto program = load_ok(pick_graph());
  ASSERT_NE(program, nullptr);
  auto s = Session::create(program, "pick");
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->set_input("c", make_tensor<uint8_t>(DType::kBool, {}, {1})).ok());
  ASSERT_TRUE((*s)->set_input("x", make_tensor<float>(DType::kF32, {4}, {1, 2, 3, 4})).ok());
  ASSERT_TRUE((*s)->run().ok());
  EXPECT_EQ(values_of<float>((*s)->output(0)), (std::vector<float>{-1, -2, -3, -4}));
  ASSERT_TRUE((*s)->set_input("x", make_tensor<float>(DType::kF32, {2}, {1, 2})).ok());
  const Status st = (*s)->run();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'if' produced f32[2] as result 0 but the graph declares f32[4]"), std::string::npos)
      << st.message();
}

}  // namespace
}  // namespace sg::testing
