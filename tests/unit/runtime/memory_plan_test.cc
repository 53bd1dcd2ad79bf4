// The memory plan (DESIGN.md #6): arena offsets by lifetime, in-place elementwise
// reuse, the arena beside its lower bound, plans cached per argument shapes.
#include <gtest/gtest.h>

#include "memory_plan.h"
#include "node_kernels.h"
#include "test_graphs.h"
#include "test_util.h"

namespace sg::testing {
namespace {

// def chain(x: i32["N"]): return neg(abs(neg(x))) + x
// i32, so every node runs a reference kernel (in place where an operand dies).
GraphSpec chain_graph() {
  GraphSpec g;
  g.symbols = {"N"};
  FunctionSpec f;
  f.name = "chain";
  const ShapeSpec n = {sym(0)};
  const uint32_t x = f.param(DType::kI32, n);
  const uint32_t a = f.op("neg", {x}, DType::kI32, n);
  const uint32_t b = f.op("abs", {a}, DType::kI32, n);
  const uint32_t c = f.op("neg", {b}, DType::kI32, n);
  f.results = {f.op("add", {c, x}, DType::kI32, n)};
  g.add_entry("chain", g.add_function(std::move(f)), {"x"}, {"y"});
  return g;
}

// def fork(x: i32["N"]): a = neg(x); b = abs(x); c = a * b; return c + a
// a lives across b and c: two buffers are live at once.
GraphSpec fork_graph() {
  GraphSpec g;
  g.symbols = {"N"};
  FunctionSpec f;
  f.name = "fork";
  const ShapeSpec n = {sym(0)};
  const uint32_t x = f.param(DType::kI32, n);
  const uint32_t a = f.op("neg", {x}, DType::kI32, n);
  const uint32_t b = f.op("abs", {x}, DType::kI32, n);
  const uint32_t c = f.op("mul", {a, b}, DType::kI32, n);
  f.results = {f.op("add", {c, a}, DType::kI32, n)};
  g.add_entry("fork", g.add_function(std::move(f)), {"x"}, {"y"});
  return g;
}

std::vector<int32_t> iota(int n) {
  std::vector<int32_t> v(size_t(n), 0);
  for (int i = 0; i < n; ++i) v[size_t(i)] = i - n / 2;
  return v;
}

TEST(MemoryPlan, ChainRunsInOneBufferInPlace) {
  auto program = load_ok(chain_graph());
  ASSERT_NE(program, nullptr);
  auto s = Session::create(program, "chain");
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->set_input("x", make_tensor<int32_t>(DType::kI32, {256}, iota(256))).ok());
  ASSERT_TRUE((*s)->run().ok());
  const std::vector<int32_t> y = values_of<int32_t>((*s)->output(0));
  const std::vector<int32_t> x = iota(256);
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], -std::abs(x[i]) + x[i]) << i;
  // a, b and c share one 1 KiB buffer: b and c are written over their operand.
  const MemoryReport m = (*s)->memory_report();
  EXPECT_EQ(m.arena_bytes, 1024u);
  EXPECT_EQ(m.lower_bound_bytes, 1024u);
}

TEST(MemoryPlan, LiveValuesGetDisjointOffsets) {
  auto program = load_ok(fork_graph());
  ASSERT_NE(program, nullptr);
  auto s = Session::create(program, "fork");
  ASSERT_TRUE(s.ok());
  for (int n : {100, 7, 100}) {  // a plan per shape; the first is reused on the third run
    ASSERT_TRUE((*s)->set_input("x", make_tensor<int32_t>(DType::kI32, {n}, iota(n))).ok());
    ASSERT_TRUE((*s)->run().ok());
    const std::vector<int32_t> y = values_of<int32_t>((*s)->output(0));
    const std::vector<int32_t> x = iota(n);
    for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], -x[i] * std::abs(x[i]) - x[i]) << i;
    const MemoryReport m = (*s)->memory_report();
    const size_t buffer = (size_t(n) * 4 + 63) / 64 * 64;
    EXPECT_EQ(m.lower_bound_bytes, 2 * buffer) << n;  // a with b, then a with c (c over b)
    EXPECT_EQ(m.arena_bytes, 2 * buffer) << n;
  }
}

TEST(MemoryPlan, PlanFixesShapesAndPlacesEscapingValuesApart) {
  auto program = load_ok(fork_graph());
  ASSERT_NE(program, nullptr);
  const runtime::FunctionImpl& fn = runtime::program_impl(*program).functions[0];
  runtime::NodeKernels kernels(runtime::program_impl(*program), 1);
  std::vector<Tensor> slots(fn.values.size());
  slots[fn.params[0]] = make_tensor<int32_t>(DType::kI32, {5}, iota(5));
  const runtime::FramePlan plan = runtime::make_plan(fn, kernels.of(0), slots);
  EXPECT_TRUE(runtime::plan_matches(plan, fn, slots, false));
  for (size_t i = 0; i < fn.nodes.size(); ++i) EXPECT_TRUE(plan.static_node[i]) << i;
  const uint32_t a = fn.nodes[0].outputs[0], b = fn.nodes[1].outputs[0], c = fn.nodes[2].outputs[0];
  const uint32_t y = fn.results[0];
  EXPECT_EQ(plan.placement[fn.params[0]], runtime::Placement::kNone);
  EXPECT_EQ(plan.placement[a], runtime::Placement::kArena);
  EXPECT_EQ(plan.placement[y], runtime::Placement::kOwned);  // a result leaves the frame
  EXPECT_NE(plan.offset[a], plan.offset[b]);
  EXPECT_EQ(plan.offset[c], plan.offset[b]);  // in place: b dies at c's node
  EXPECT_EQ(plan.shape[y].rank, 1);
  EXPECT_EQ(plan.shape[y].dims[0], 5);
  slots[fn.params[0]] = make_tensor<int32_t>(DType::kI32, {6}, iota(6));
  EXPECT_FALSE(runtime::plan_matches(plan, fn, slots, false));
}

// Which static steps run through a kernel's fixed run (kernel.h), and that they
// compute what the kernels do: f32 ops on one flat row (our binary kernels, on
// builds with the backend), and rank-0 counters that cannot fail; integer `//`,
// which fails on a zero divisor, and the broadcast that needs a plan keep run().
// def f(x: f32[16], i: i64, r: f32[4, 16]):
//     return (x * x + x, i + i, i // i, r + x)
TEST(MemoryPlan, FixedRunsWhereTheKernelHasOne) {
  GraphSpec g;
  FunctionSpec f;
  f.name = "f";
  const uint32_t x = f.param(DType::kF32, shape({16}));
  const uint32_t i = f.param(DType::kI64, shape({}));
  const uint32_t r = f.param(DType::kF32, shape({4, 16}));
  const uint32_t xx = f.op("mul", {x, x}, DType::kF32, shape({16}));
  f.results = {f.op("add", {xx, x}, DType::kF32, shape({16})), f.op("add", {i, i}, DType::kI64, shape({})),
               f.op("floordiv", {i, i}, DType::kI64, shape({})), f.op("add", {r, x}, DType::kF32, shape({4, 16}))};
  g.add_entry("f", g.add_function(std::move(f)), {"x", "i", "r"}, {"y", "j", "k", "z"});
  auto program = load_ok(g);
  ASSERT_NE(program, nullptr);
  const runtime::FunctionImpl& fn = runtime::program_impl(*program).functions[0];
  runtime::NodeKernels kernels(runtime::program_impl(*program), 1);
  std::vector<float> xs(16), rs(64);
  for (int k = 0; k < 16; ++k) xs[size_t(k)] = 0.25f * float(k - 8);
  for (int k = 0; k < 64; ++k) rs[size_t(k)] = float(k);
  std::vector<Tensor> slots(fn.values.size());
  slots[fn.params[0]] = make_tensor<float>(DType::kF32, {16}, xs);
  slots[fn.params[1]] = make_tensor<int64_t>(DType::kI64, {}, {7});
  slots[fn.params[2]] = make_tensor<float>(DType::kF32, {4, 16}, rs);
  const runtime::FramePlan plan = runtime::make_plan(fn, kernels.of(0), slots);
  const runtime::StepMode flat_row = kernels.at(0, 0).prepared != nullptr ? runtime::StepMode::kFixed
                                                                           : runtime::StepMode::kDirect;
  EXPECT_EQ(plan.steps[0].mode, flat_row);                  // x * x
  EXPECT_EQ(plan.steps[1].mode, flat_row);                  // + x
  EXPECT_EQ(plan.steps[2].mode, runtime::StepMode::kFixed);   // i + i
  EXPECT_EQ(plan.steps[3].mode, runtime::StepMode::kDirect);  // i // i can fail
  EXPECT_EQ(plan.steps[4].mode, runtime::StepMode::kDirect);  // [4, 16] + [16]: a broadcast plan

  auto s = Session::create(program, "f");
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->set_input("x", make_tensor<float>(DType::kF32, {16}, xs)).ok());
  ASSERT_TRUE((*s)->set_input("i", make_tensor<int64_t>(DType::kI64, {}, {7})).ok());
  ASSERT_TRUE((*s)->set_input("r", make_tensor<float>(DType::kF32, {4, 16}, rs)).ok());
  for (int run = 0; run < 2; ++run) {
    ASSERT_TRUE((*s)->run().ok());
    const std::vector<float> y = values_of<float>((*s)->output(0));
    for (size_t k = 0; k < 16; ++k) EXPECT_EQ(y[k], xs[k] * xs[k] + xs[k]) << k;
    EXPECT_EQ(values_of<int64_t>((*s)->output(1)), std::vector<int64_t>{14});
    EXPECT_EQ(values_of<int64_t>((*s)->output(2)), std::vector<int64_t>{1});
    const std::vector<float> z = values_of<float>((*s)->output(3));
    for (size_t k = 0; k < 64; ++k) EXPECT_EQ(z[k], rs[k] + xs[k % 16]) << k;
  }
  ASSERT_TRUE((*s)->set_input("i", make_tensor<int64_t>(DType::kI64, {}, {0})).ok());
  const Status zero = (*s)->run();
  EXPECT_FALSE(zero.ok());
  EXPECT_NE(zero.message().find("division by zero"), std::string::npos) << zero.message();
}

TEST(MemoryPlan, ArenaStaysNearItsLowerBoundOnALongChain) {
  // def ladder(x: i32[64]): v_k = v_{k-1} + v_{k-2}, 40 nodes, each read twice.
  GraphSpec g;
  FunctionSpec f;
  f.name = "ladder";
  const uint32_t x = f.param(DType::kI32, shape({64}));
  uint32_t prev = x, cur = f.op("neg", {x}, DType::kI32, shape({64}));
  for (int k = 0; k < 40; ++k) {
    const uint32_t next = f.op(k % 2 ? "add" : "sub", {cur, prev}, DType::kI32, shape({64}));
    prev = cur;
    cur = next;
  }
  f.results = {f.op("abs", {cur}, DType::kI32, shape({64}))};
  g.add_entry("ladder", g.add_function(std::move(f)), {"x"}, {"y"});
  auto program = load_ok(g);
  ASSERT_NE(program, nullptr);
  auto s = Session::create(program, "ladder");
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->set_input("x", make_tensor<int32_t>(DType::kI32, {64}, iota(64))).ok());
  ASSERT_TRUE((*s)->run().ok());
  const MemoryReport m = (*s)->memory_report();
  EXPECT_GT(m.lower_bound_bytes, 0u);
  EXPECT_LE(double(m.arena_bytes), 1.05 * double(m.lower_bound_bytes));
}

// row_graph(): neg(x[t]) with t a run-time index. An index drops its axis whatever its
// value: the row has a planned shape and lives in the arena (the rnn benchmark's
// xs[t] in its loop body), and the kernel still checks the bound on every run.
TEST(MemoryPlan, RowAtARunTimeIndexHasAPlannedShape) {
  auto program = load_ok(row_graph());
  ASSERT_NE(program, nullptr);

  const runtime::FunctionImpl& fn = runtime::program_impl(*program).functions[0];
  runtime::NodeKernels kernels(runtime::program_impl(*program), 1);
  std::vector<Tensor> slots(fn.values.size());
  std::vector<float> xs(128);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = float(i);
  slots[fn.params[0]] = make_tensor<float>(DType::kF32, {8, 16}, xs);
  slots[fn.params[1]] = scalar_i64(5);
  const runtime::FramePlan plan = runtime::make_plan(fn, kernels.of(0), slots);
  const uint32_t r = fn.nodes[0].outputs[0];
  EXPECT_TRUE(plan.static_node[0]);
  EXPECT_EQ(plan.placement[r], runtime::Placement::kArena);
  EXPECT_EQ(plan.shape[r].rank, 1);
  EXPECT_EQ(plan.shape[r].dims[0], 16);

  auto s = Session::create(program, "row");
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->set_input("x", make_tensor<float>(DType::kF32, {8, 16}, xs)).ok());
  for (int64_t row : {5, -1, 0}) {
    ASSERT_TRUE((*s)->set_input("t", scalar_i64(row)).ok());
    const Status st = (*s)->run();
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(values_of<float>((*s)->output(0))[1], -float((row + 8) % 8 * 16 + 1)) << row;
  }
  ASSERT_TRUE((*s)->set_input("t", scalar_i64(8)).ok());
  const Status st = (*s)->run();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("out of bounds"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(":3:9"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace sg::testing
