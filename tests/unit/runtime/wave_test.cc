// Waves (plan_waves.h): with more than one thread, independent heavy nodes run
// concurrently, each on one thread, with the same results as a sequential run;
// dependent nodes, control flow and effects never form one; the memory plan keeps
// a wave's operands apart.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "memory_plan.h"
#include "node_kernels.h"
#include "test_util.h"

namespace sg::testing {
namespace {

constexpr int64_t kN = 128;  // a 128x128x128 matmul: 4 MFLOP, above the wave threshold

std::vector<float> pattern(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * float(int(i * 7919 % 23) - 11) / 16.0f;
  return v;
}

Tensor square(float scale) { return make_tensor<float>(DType::kF32, {kN, kN}, pattern(size_t(kN * kN), scale)); }

// def branches(x, y: f32[128, 128]): a = x @ x; c = neg(x); b = y @ y; return a + b + c
// a and b are independent and heavy; c is light and stays where it is, so b moves
// ahead of it into a's wave.
GraphSpec branches_graph() {
  GraphSpec g;
  FunctionSpec f;
  f.name = "branches";
  const ShapeSpec sq = shape({kN, kN});
  const uint32_t x = f.param(DType::kF32, sq);
  const uint32_t y = f.param(DType::kF32, sq);
  const uint32_t a = f.op("matmul", {x, x}, DType::kF32, sq);
  const uint32_t c = f.op("neg", {x}, DType::kF32, sq);
  const uint32_t b = f.op("matmul", {y, y}, DType::kF32, sq);
  const uint32_t ab = f.op("add", {a, b}, DType::kF32, sq);
  f.results = {f.op("add", {ab, c}, DType::kF32, sq)};
  g.add_entry("branches", g.add_function(std::move(f)), {"x", "y"}, {"z"});
  return g;
}

// def pair(x, y): return x @ x, y @ y      (wave nodes whose outputs leave the frame)
GraphSpec pair_results_graph() {
  GraphSpec g;
  FunctionSpec f;
  f.name = "pair";
  const ShapeSpec sq = shape({kN, kN});
  const uint32_t x = f.param(DType::kF32, sq);
  const uint32_t y = f.param(DType::kF32, sq);
  f.results = {f.op("matmul", {x, x}, DType::kF32, sq), f.op("matmul", {y, y}, DType::kF32, sq)};
  g.add_entry("pair", g.add_function(std::move(f)), {"x", "y"}, {"a", "b"});
  return g;
}

// def chain(x, y): a = x @ y; b = a @ x; return b @ y      (each node needs the last)
GraphSpec dependent_graph() {
  GraphSpec g;
  FunctionSpec f;
  f.name = "chain";
  const ShapeSpec sq = shape({kN, kN});
  const uint32_t x = f.param(DType::kF32, sq);
  const uint32_t y = f.param(DType::kF32, sq);
  const uint32_t a = f.op("matmul", {x, y}, DType::kF32, sq);
  const uint32_t b = f.op("matmul", {a, x}, DType::kF32, sq);
  f.results = {f.op("matmul", {b, y}, DType::kF32, sq)};
  g.add_entry("chain", g.add_function(std::move(f)), {"x", "y"}, {"z"});
  return g;
}

// def checked(x, y, ok: bool): a = x @ x; assert ok, "not ok"; b = y @ y; return a + b
GraphSpec assert_between_graph() {
  GraphSpec g;
  FunctionSpec f;
  f.name = "checked";
  const ShapeSpec sq = shape({kN, kN});
  const uint32_t x = f.param(DType::kF32, sq);
  const uint32_t y = f.param(DType::kF32, sq);
  const uint32_t ok = f.param(DType::kBool, {});
  const uint32_t a = f.op("matmul", {x, x}, DType::kF32, sq);
  NodeSpec check;
  check.op = "assert";
  check.inputs = {ok};
  check.attrs = {{"message", ops::AttrValue::String("not ok")}};
  check.line = 7;
  check.column = 5;
  f.nodes.push_back(check);
  const uint32_t b = f.op("matmul", {y, y}, DType::kF32, sq);
  f.results = {f.op("add", {a, b}, DType::kF32, sq)};
  g.add_entry("checked", g.add_function(std::move(f)), {"x", "y", "ok"}, {"z"});
  return g;
}

// def ladder(x: i32[1024, 1024]): a = neg(x); b = abs(x); c = neg(a); d = abs(b); return c + d
// Reference elementwise kernels on 4 MiB operands: two waves, {a, b} and {c, d},
// where a sequential plan would write c over a and d over b.
GraphSpec ladder_graph() {
  GraphSpec g;
  FunctionSpec f;
  f.name = "ladder";
  const ShapeSpec big = shape({1024, 1024});
  const uint32_t x = f.param(DType::kI32, big);
  const uint32_t a = f.op("neg", {x}, DType::kI32, big);
  const uint32_t b = f.op("abs", {x}, DType::kI32, big);
  const uint32_t c = f.op("neg", {a}, DType::kI32, big);
  const uint32_t d = f.op("abs", {b}, DType::kI32, big);
  f.results = {f.op("add", {c, d}, DType::kI32, big)};
  g.add_entry("ladder", g.add_function(std::move(f)), {"x"}, {"y"});
  return g;
}

// def hoisted(x): a = x @ x; e = exp(a); t = transpose(x); b = x @ t; return e + b
// b's input t is made after a's place, by a light node that reads only x: t is
// hoisted into the wave {a, b}, and runs before it.
GraphSpec hoisted_graph() {
  GraphSpec g;
  FunctionSpec f;
  f.name = "hoisted";
  const ShapeSpec sq = shape({kN, kN});
  const uint32_t x = f.param(DType::kF32, sq);
  const uint32_t a = f.op("matmul", {x, x}, DType::kF32, sq);
  const uint32_t e = f.op("exp", {a}, DType::kF32, sq);
  const uint32_t t = f.op("transpose", {x}, DType::kF32, sq);
  f.nodes.back().attrs = {{"perm", ops::AttrValue::Ints({1, 0})}};
  const uint32_t b = f.op("matmul", {x, t}, DType::kF32, sq);
  f.results = {f.op("add", {e, b}, DType::kF32, sq)};
  g.add_entry("hoisted", g.add_function(std::move(f)), {"x"}, {"y"});
  return g;
}

std::unique_ptr<Session> session(const std::shared_ptr<const Program>& program, const std::string& entry, int threads,
                                 bool profile = false) {
  SessionOptions options;
  options.num_threads = threads;
  options.profile = profile;
  auto s = Session::create(program, entry, options);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(s).value() : nullptr;
}

// Waves need a second thread: a build with a thread pool, and two CPUs to run on.
#ifdef SG_HAVE_XNNPACK
const bool kHasPool = two_cpus();
#else
const bool kHasPool = false;  // no thread pool in this build: threads are ignored
#endif

TEST(Waves, IndependentBranchesRunAsOneWaveWithTheSameResults) {
  auto program = load_ok(branches_graph());
  ASSERT_NE(program, nullptr);
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2}) {
    auto s = session(program, "branches", threads);
    ASSERT_NE(s, nullptr);
    ASSERT_TRUE(s->set_input("x", square(1.0f)).ok());
    ASSERT_TRUE(s->set_input("y", square(-0.5f)).ok());
    for (int run = 0; run < 3; ++run) ASSERT_TRUE(s->run().ok()) << threads << " threads";
    results.push_back(values_of<float>(s->output(0)));
    const ScheduleStats st = s->schedule_stats();
    const bool waves = threads > 1 && kHasPool;
    EXPECT_EQ(st.waves, waves ? 3u : 0u) << threads << " threads";
    EXPECT_EQ(st.wave_nodes, waves ? 6u : 0u) << threads << " threads";
  }
  // Each node of a wave runs single-threaded, as with one thread: the same bits.
  EXPECT_EQ(results[0], results[1]);
  // And the sum is right: element (0, 0) by hand.
  const std::vector<float> x = pattern(size_t(kN * kN), 1.0f), y = pattern(size_t(kN * kN), -0.5f);
  double expect = -double(x[0]);
  for (int64_t k = 0; k < kN; ++k) expect += double(x[size_t(k * kN)]) * x[size_t(k)] + double(y[size_t(k * kN)]) * y[size_t(k)];
  EXPECT_NEAR(results[1][0], expect, 1e-3);
}

TEST(Waves, SessionsMayTurnThemOff) {
  auto program = load_ok(branches_graph());
  ASSERT_NE(program, nullptr);
  SessionOptions options;
  options.num_threads = 2;
  options.concurrent_nodes = false;
  auto s = Session::create(program, "branches", options);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->set_input("x", square(1.0f)).ok());
  ASSERT_TRUE((*s)->set_input("y", square(1.0f)).ok());
  ASSERT_TRUE((*s)->run().ok());
  EXPECT_EQ((*s)->schedule_stats().waves, 0u);
}

TEST(Waves, WaveNodesMayReturnTheirResults) {
  auto program = load_ok(pair_results_graph());
  ASSERT_NE(program, nullptr);
  auto one = session(program, "pair", 1);
  auto two = session(program, "pair", 2);
  ASSERT_NE(one, nullptr);
  ASSERT_NE(two, nullptr);
  for (Session* s : {one.get(), two.get()}) {
    ASSERT_TRUE(s->set_input("x", square(0.25f)).ok());
    ASSERT_TRUE(s->set_input("y", square(2.0f)).ok());
    ASSERT_TRUE(s->run().ok());
    ASSERT_TRUE(s->run().ok());
  }
  for (size_t k = 0; k < 2; ++k) EXPECT_EQ(values_of<float>(one->output(k)), values_of<float>(two->output(k))) << k;
  EXPECT_NE(values_of<float>(two->output(0)), values_of<float>(two->output(1)));
  EXPECT_EQ(two->schedule_stats().waves, kHasPool ? 2u : 0u);
}

TEST(Waves, DependentNodesNeverFormAWave) {
  auto program = load_ok(dependent_graph());
  ASSERT_NE(program, nullptr);
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2, 4}) {
    auto s = session(program, "chain", threads);
    ASSERT_NE(s, nullptr);
    ASSERT_TRUE(s->set_input("x", square(0.5f)).ok());
    ASSERT_TRUE(s->set_input("y", square(0.25f)).ok());
    ASSERT_TRUE(s->run().ok());
    EXPECT_EQ(s->schedule_stats().waves, 0u) << threads << " threads";
    results.push_back(values_of<float>(s->output(0)));
  }
  for (size_t k = 1; k < results.size(); ++k)
    for (size_t i = 0; i < results[0].size(); ++i)
      ASSERT_NEAR(results[k][i], results[0][i], 1e-4 * (1 + std::abs(results[0][i]))) << i;
}

TEST(Waves, NothingMovesAcrossAnEffect) {
  auto program = load_ok(assert_between_graph());
  ASSERT_NE(program, nullptr);
  auto s = session(program, "checked", 2);
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->set_input("x", square(1.0f)).ok());
  ASSERT_TRUE(s->set_input("y", square(1.0f)).ok());
  ASSERT_TRUE(s->set_input("ok", make_tensor<uint8_t>(DType::kBool, {}, {1})).ok());
  ASSERT_TRUE(s->run().ok());
  ASSERT_TRUE(s->set_input("ok", make_tensor<uint8_t>(DType::kBool, {}, {0})).ok());
  const Status failed = s->run();
  EXPECT_EQ(failed.code(), StatusCode::kRuntimeError);
  EXPECT_NE(failed.message().find("not ok"), std::string::npos) << failed.message();
  EXPECT_EQ(s->schedule_stats().waves, 0u);
}

TEST(Waves, ProfileTimesEveryWaveNode) {
  auto program = load_ok(branches_graph());
  ASSERT_NE(program, nullptr);
  auto s = session(program, "branches", 2, /*profile=*/true);
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->set_input("x", square(1.0f)).ok());
  ASSERT_TRUE(s->set_input("y", square(1.0f)).ok());
  ASSERT_TRUE(s->run().ok());
  ASSERT_TRUE(s->run().ok());
  const std::vector<NodeProfile> p = s->profile();
  ASSERT_EQ(p.size(), 5u);
  for (const NodeProfile& n : p) {
    EXPECT_EQ(n.calls, 2u) << n.op << " node " << n.node;
    if (n.op == "matmul") {
      EXPECT_GT(n.total_ns, 0u);
    }
  }
}

// The plan itself: the wave's nodes run in no one's place, and what one of them
// writes overlaps nothing another reads or writes.
TEST(Waves, PlanKeepsAWavesOperandsApart) {
  auto program = load_ok(ladder_graph());
  ASSERT_NE(program, nullptr);
  const runtime::FunctionImpl& fn = runtime::program_impl(*program).functions[0];
  runtime::NodeKernels kernels(runtime::program_impl(*program), 2);
  std::vector<Tensor> slots(fn.values.size());
  slots[fn.params[0]] = Tensor::zeros(DType::kI32, std::vector<int64_t>{1024, 1024}).value();
  runtime::PlanRequest request;
  request.max_wave = 2;
  const runtime::FramePlan plan = runtime::make_plan(fn, kernels.of(0), slots, request);
  ASSERT_EQ(plan.wave_nodes, (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(plan.steps[0].mode, runtime::StepMode::kWave);
  EXPECT_EQ(plan.steps[1].mode, runtime::StepMode::kRan);
  EXPECT_EQ(plan.steps[2].mode, runtime::StepMode::kWave);
  EXPECT_EQ(plan.steps[3].mode, runtime::StepMode::kRan);
  EXPECT_EQ(plan.steps[4].mode, runtime::StepMode::kDirect);  // alone: its inputs come from the last wave
  const auto range = [&](uint32_t v) {
    EXPECT_EQ(plan.placement[v], runtime::Placement::kArena) << v;
    return std::pair<size_t, size_t>{plan.offset[v], plan.offset[v] + size_t(1024 * 1024 * 4)};
  };
  const auto apart = [&](uint32_t u, uint32_t v) {
    const auto [a0, a1] = range(u);
    const auto [b0, b1] = range(v);
    return a1 <= b0 || b1 <= a0;
  };
  for (uint32_t w : {0u, 2u}) {
    const runtime::NodeInfo &p = fn.nodes[w], &q = fn.nodes[w + 1];
    const uint32_t po = p.outputs[0], qo = q.outputs[0];
    EXPECT_TRUE(apart(po, qo)) << "wave at " << w;
    for (const runtime::NodeInfo* n : {&p, &q}) {
      for (uint32_t in : n->inputs) {
        if (plan.placement[in] == runtime::Placement::kArena) {
          EXPECT_TRUE(apart(in, po)) << "wave at " << w;
          EXPECT_TRUE(apart(in, qo)) << "wave at " << w;
        } else {
          EXPECT_EQ(in, fn.params[0]);
        }
      }
    }
  }
  // Without waves, the same function runs c over a and d over b.
  const runtime::FramePlan sequential = runtime::make_plan(fn, kernels.of(0), slots);
  EXPECT_TRUE(sequential.wave_nodes.empty());
  EXPECT_EQ(sequential.offset[fn.nodes[2].outputs[0]], sequential.offset[fn.nodes[0].outputs[0]]);
  EXPECT_LT(sequential.arena_bytes, plan.arena_bytes);
}

TEST(Waves, ALightNodeFeedingAWaveIsHoisted) {
  auto program = load_ok(hoisted_graph());
  ASSERT_NE(program, nullptr);
  const runtime::FunctionImpl& fn = runtime::program_impl(*program).functions[0];
  runtime::NodeKernels kernels(runtime::program_impl(*program), 2);
  std::vector<Tensor> slots(fn.values.size());
  slots[fn.params[0]] = square(1.0f);
  runtime::PlanRequest request;
  request.max_wave = 2;
  const runtime::FramePlan plan = runtime::make_plan(fn, kernels.of(0), slots, request);
  ASSERT_EQ(plan.waves.size(), 1u);
  EXPECT_EQ(plan.waves[0].n_pre, 1u);
  EXPECT_EQ(plan.waves[0].n_parallel, 2u);
  EXPECT_EQ(plan.wave_nodes, (std::vector<uint32_t>{2, 0, 3}));  // transpose, then the two matmuls
  EXPECT_EQ(plan.steps[0].mode, runtime::StepMode::kWave);
  EXPECT_EQ(plan.steps[1].mode, runtime::StepMode::kDirect);  // exp stays where it is
  EXPECT_EQ(plan.steps[2].mode, runtime::StepMode::kRan);
  EXPECT_EQ(plan.steps[3].mode, runtime::StepMode::kRan);

  std::vector<std::vector<float>> results;
  for (int threads : {1, 2}) {
    auto s = session(program, "hoisted", threads, /*profile=*/true);
    ASSERT_NE(s, nullptr);
    ASSERT_TRUE(s->set_input("x", square(0.125f)).ok());
    ASSERT_TRUE(s->run().ok());
    ASSERT_TRUE(s->run().ok());
    results.push_back(values_of<float>(s->output(0)));
    EXPECT_EQ(s->schedule_stats().waves, threads > 1 && kHasPool ? 2u : 0u);
    for (const NodeProfile& n : s->profile()) EXPECT_EQ(n.calls, 2u) << n.op;
  }
  EXPECT_EQ(results[0], results[1]);
}

TEST(Waves, LadderGivesTheSameResultsWithAndWithoutWaves) {
  auto program = load_ok(ladder_graph());
  ASSERT_NE(program, nullptr);
  std::vector<int32_t> x(size_t(1024 * 1024));
  for (size_t i = 0; i < x.size(); ++i) x[i] = int32_t(i % 1000) - 500;
  for (int threads : {1, 2}) {
    auto s = session(program, "ladder", threads);
    ASSERT_NE(s, nullptr);
    ASSERT_TRUE(s->set_input("x", make_tensor<int32_t>(DType::kI32, {1024, 1024}, x)).ok());
    ASSERT_TRUE(s->run().ok());
    ASSERT_TRUE(s->run().ok());
    const int32_t* y = s->output(0)->data_as<int32_t>();
    for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], x[i] + std::abs(x[i])) << i << ", " << threads << " threads";
    EXPECT_EQ(s->schedule_stats().waves, threads > 1 && kHasPool ? 4u : 0u);
  }
}

}  // namespace
}  // namespace sg::testing
