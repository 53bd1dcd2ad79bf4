// Kernels by capability: each node runs the best kernel the build has for it, the
// profile names it, and prepared kernels (packed weights) are per Session.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_graphs.h"
#include "test_util.h"

namespace sg::testing {
namespace {

// def dense(x: f32["N", 4]): return x @ w     (w: [4, 3], a constant)
GraphSpec dense_graph() {
  GraphSpec g;
  g.symbols = {"N"};
  const int32_t w = g.add_constant<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  FunctionSpec f;
  f.name = "dense";
  const uint32_t x = f.param(DType::kF32, {sym(0), {4, -1}});
  const uint32_t kw = f.value(DType::kF32, shape({4, 3}), w);
  f.results = {f.op("matmul", {x, kw}, DType::kF32, {sym(0), {3, -1}}, 4, 9)};
  g.add_entry("dense", g.add_function(std::move(f)), {"x"}, {"y"});
  return g;
}

std::unique_ptr<Session> dense_session(const std::shared_ptr<const Program>& program, int threads) {
  SessionOptions options;
  options.profile = true;
  options.num_threads = threads;
  auto s = Session::create(program, "dense", options);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(s).value() : nullptr;
}

// A dense layer runs our packed GEMM where it is the faster on this CPU (AVX2, or
// AVX-512 with panels mostly full; not this 4 -> 3 layer there), else XNNPACK's.
bool dense_kernel(const std::string& k) {
  return k.rfind("xnnpack:fully_connected", 0) == 0 || k.rfind("sg:packed_gemm", 0) == 0;
}

TEST(KernelSelection, MatMulWithConstantWeightRunsADenseKernelAndIsCorrect) {
  auto program = load_ok(dense_graph());
  ASSERT_NE(program, nullptr);
  for (int threads : {1, 2}) {
    auto s = dense_session(program, threads);
    ASSERT_NE(s, nullptr);
    ASSERT_TRUE(s->set_input("x", make_tensor<float>(DType::kF32, {2, 4}, {1, 0, 0, 0, 1, 1, 1, 1})).ok());
    ASSERT_TRUE(s->run().ok());
    EXPECT_EQ(values_of<float>(s->output(0)), (std::vector<float>{1, 2, 3, 22, 26, 30})) << threads << " threads";
    const std::vector<NodeProfile> p = s->profile();
    ASSERT_EQ(p.size(), 1u);
#ifdef SG_HAVE_XNNPACK
    EXPECT_TRUE(dense_kernel(p[0].kernel)) << p[0].kernel;
    // The packed weights belong to this Session.
    EXPECT_GE(s->memory_bytes(), 12 * sizeof(float));
    EXPECT_EQ(s->memory_report().kernel_bytes, s->memory_bytes());
#else
    EXPECT_EQ(p[0].kernel, "reference");
    EXPECT_EQ(s->memory_bytes(), 0u);
#endif
  }
}

// def wide(x: f32["N", 4]): return x @ w     (w: [4, 32], w[k][j] = k + j)
GraphSpec wide_graph() {
  GraphSpec g;
  g.symbols = {"N"};
  std::vector<float> w(4 * 32);
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 32; ++j) w[size_t(k * 32 + j)] = float(k + j);
  const int32_t c = g.add_constant(std::span<const float>(w));
  FunctionSpec f;
  f.name = "wide";
  const uint32_t x = f.param(DType::kF32, {sym(0), {4, -1}});
  const uint32_t kw = f.value(DType::kF32, shape({4, 32}), c);
  f.results = {f.op("matmul", {x, kw}, DType::kF32, {sym(0), {32, -1}}, 4, 9)};
  g.add_entry("wide", g.add_function(std::move(f)), {"x"}, {"y"});
  return g;
}

// def squash(x: f32["N"]): return sigmoid(x)    (an XNNPACK operator on every CPU)
GraphSpec sigmoid_graph() {
  GraphSpec g;
  g.symbols = {"N"};
  FunctionSpec f;
  f.name = "squash";
  const uint32_t x = f.param(DType::kF32, {sym(0)});
  f.results = {f.op("sigmoid", {x}, DType::kF32, {sym(0)}, 4, 9)};
  g.add_entry("squash", g.add_function(std::move(f)), {"x"}, {"y"});
  return g;
}

// Threads are a team (kernel.h) when every kernel of the Session is one of ours,
// and a pool when one runs an XNNPACK operator (sigmoid here; the dense layers
// where XNNPACK's operator is the faster). Both give the same results.
TEST(KernelSelection, ThreadsAreATeamUnlessAKernelNeedsThePool) {
  auto squash = load_ok(sigmoid_graph());
  auto wide = load_ok(wide_graph());
  ASSERT_NE(squash, nullptr);
  ASSERT_NE(wide, nullptr);
  for (int threads : {1, 2}) {
    SessionOptions options;
    options.profile = true;
    options.num_threads = threads;
    auto q = Session::create(squash, "squash", options);
    auto w = Session::create(wide, "wide", options);
    ASSERT_TRUE(q.ok()) << q.status().message();
    ASSERT_TRUE(w.ok()) << w.status().message();
    // 64 rows: 2 x 64 x 4 x 32 = 16k FLOPs per row block, split on a team only.
    std::vector<float> x(64 * 4);
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 7) - 3;
    ASSERT_TRUE((*w)->set_input("x", make_tensor<float>(DType::kF32, {64, 4}, x)).ok());
    ASSERT_TRUE((*w)->run().ok());
    const std::vector<float> y = values_of<float>((*w)->output(0));
    ASSERT_EQ(y.size(), 64u * 32u);
    for (size_t r = 0; r < 64; ++r)
      for (size_t j = 0; j < 32; ++j) {
        float want = 0;
        for (size_t k = 0; k < 4; ++k) want += x[r * 4 + k] * float(k + j);
        ASSERT_EQ(y[r * 32 + j], want) << "row " << r << ", column " << j << ", " << threads << " threads";
      }
    ASSERT_TRUE((*q)->set_input("x", make_tensor<float>(DType::kF32, {3}, {0, 1, -1})).ok());
    ASSERT_TRUE((*q)->run().ok());
    const std::vector<float> sq = values_of<float>((*q)->output(0));
    ASSERT_EQ(sq.size(), 3u);
    EXPECT_EQ(sq[0], 0.5f);
    EXPECT_NEAR(sq[1], 0.7310586f, 1e-6f);
    EXPECT_NEAR(sq[2], 0.2689414f, 1e-6f);
    const ScheduleStats qs = (*q)->schedule_stats(), ws = (*w)->schedule_stats();
    if (threads == 1 || !two_cpus()) {
      EXPECT_EQ(qs.threads, 1);
      EXPECT_EQ(ws.threads, 1);
      EXPECT_FALSE(ws.team);
      continue;
    }
#ifdef SG_HAVE_XNNPACK
    EXPECT_EQ((*q)->profile()[0].kernel, "xnnpack:sigmoid_nc_f32");
    EXPECT_EQ(qs.threads, 2);
    EXPECT_FALSE(qs.team) << "XNNPACK's sigmoid operator needs the pool";
    EXPECT_EQ(ws.threads, 2);
    const std::string kernel = (*w)->profile()[0].kernel;
    if (kernel.rfind("sg:packed_gemm", 0) == 0)
      EXPECT_TRUE(ws.team) << "every kernel is ours";
    else
      EXPECT_FALSE(ws.team) << kernel;  // CPUs without AVX2 keep XNNPACK's operator
#endif
  }
}

TEST(KernelSelection, SessionsPrepareTheirOwnKernels) {
  auto program = load_ok(dense_graph());
  ASSERT_NE(program, nullptr);
  auto a = dense_session(program, 1);
  auto b = dense_session(program, 1);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->memory_bytes(), b->memory_bytes());
  // Different batch sizes in the two Sessions: each kernel re-plans for its own.
  ASSERT_TRUE(a->set_input("x", make_tensor<float>(DType::kF32, {1, 4}, {0, 1, 0, 0})).ok());
  ASSERT_TRUE(b->set_input("x", make_tensor<float>(DType::kF32, {3, 4}, {0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0})).ok());
  ASSERT_TRUE(a->run().ok());
  ASSERT_TRUE(b->run().ok());
  EXPECT_EQ(values_of<float>(a->output(0)), (std::vector<float>{4, 5, 6}));
  EXPECT_EQ(values_of<float>(b->output(0)), (std::vector<float>{7, 8, 9, 10, 11, 12, 0, 0, 0}));
  a.reset();  // b's kernels do not depend on a's
  ASSERT_TRUE(b->run().ok());
  EXPECT_EQ(values_of<float>(b->output(0))[0], 7.0f);
}

TEST(KernelSelection, IntegerAndControlFlowNodesAreNamed) {
  auto program = load_ok(while_sum_graph());
  ASSERT_NE(program, nullptr);
  SessionOptions options;
  options.profile = true;
  auto s = Session::create(program, "total", options);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->set_input("n", scalar_i64(4)).ok());
  ASSERT_TRUE((*s)->run().ok());
  int seen = 0;
  for (const NodeProfile& p : (*s)->profile()) {
    if (p.op == "while") {
      EXPECT_EQ(p.kernel, "control-flow");
    } else {
      EXPECT_EQ(p.kernel, "reference:scalar") << p.op;  // i64 scalars: the rank-0 kernel
    }
    ++seen;
  }
  EXPECT_EQ(seen, 4);
}

}  // namespace
}  // namespace sg::testing
