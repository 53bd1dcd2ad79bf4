// A value whose length only its producer's operands decide (flat_nonzero, under
// x[mask] and sg.nonzero): the planner leaves it and what reads it to the run, the
// kernel family reports the count, the executor sizes the output from it, and a
// plan made for one input shape serves every count.
#include <gtest/gtest.h>

#include <cstdlib>

#include "memory_plan.h"
#include "node_kernels.h"
#include "test_util.h"

namespace sg::testing {
namespace {

// def select(x: i32["N"]):
//     idx = flat_nonzero(x)       # i64["K"], K known only at run time
//     y = neg(take(x, idx))       # i32["K"]
//     return y, idx
GraphSpec select_graph() {
  GraphSpec g;
  g.symbols = {"N", "K"};
  FunctionSpec f;
  f.name = "select";
  const uint32_t x = f.param(DType::kI32, {sym(0)});
  const uint32_t idx = f.op("flat_nonzero", {x}, DType::kI64, {sym(1)});
  NodeSpec& take_node = f.nodes.emplace_back();
  take_node.op = "take";
  take_node.inputs = {x, idx};
  take_node.outputs = {f.value(DType::kI32, {sym(1)})};
  take_node.attrs = {{"axis", ops::AttrValue::Int(0)}};
  take_node.line = 2;
  const uint32_t taken = take_node.outputs[0];
  const uint32_t y = f.op("neg", {taken}, DType::kI32, {sym(1)}, 3);
  f.results = {y, idx};
  g.add_entry("select", g.add_function(std::move(f)), {"x"}, {"y", "idx"});
  return g;
}

TEST(DataDependentShape, OutputsAreSizedByTheCountEachRun) {
  auto program = load_ok(select_graph());
  ASSERT_NE(program, nullptr);
  auto s = Session::create(program, "select");
  ASSERT_TRUE(s.ok()) << s.status().message();
  // One input shape, counts 3, 0, 5 and 3 again: one plan, outputs sized per run.
  const std::vector<std::vector<int32_t>> inputs = {
      {0, 4, 0, -2, 7}, {0, 0, 0, 0, 0}, {1, 2, 3, 4, 5}, {9, 0, 0, 8, 1}};
  for (const std::vector<int32_t>& in : inputs) {
    ASSERT_TRUE((*s)->set_input("x", make_tensor<int32_t>(DType::kI32, {5}, in)).ok());
    const Status ran = (*s)->run();
    ASSERT_TRUE(ran.ok()) << ran.message();
    std::vector<int32_t> want_y;
    std::vector<int64_t> want_idx;
    for (size_t i = 0; i < in.size(); ++i)
      if (in[i] != 0) {
        want_y.push_back(-in[i]);
        want_idx.push_back(int64_t(i));
      }
    EXPECT_EQ(values_of<int32_t>((*s)->output(0)), want_y);
    EXPECT_EQ(values_of<int64_t>((*s)->output(1)), want_idx);
    const Result<Tensor> y = (*s)->output(0);
    ASSERT_TRUE(y.ok());
    EXPECT_EQ(y->shape().size(), 1u);
    EXPECT_EQ(y->shape()[0], int64_t(want_y.size()));
  }
}

TEST(DataDependentShape, PlannerLeavesTheValueAndItsReadersToTheRun) {
  auto program = load_ok(select_graph());
  ASSERT_NE(program, nullptr);
  const runtime::FunctionImpl& fn = runtime::program_impl(*program).functions[0];
  runtime::NodeKernels kernels(runtime::program_impl(*program), 1);
  std::vector<Tensor> slots(fn.values.size());
  slots[fn.params[0]] = make_tensor<int32_t>(DType::kI32, {4}, {1, 0, 2, 0});
  const runtime::FramePlan plan = runtime::make_plan(fn, kernels.of(0), slots);
  for (size_t i = 0; i < fn.nodes.size(); ++i) {
    EXPECT_FALSE(plan.static_node[i]) << i;  // flat_nonzero, then what reads its length
    for (uint32_t v : fn.nodes[i].outputs) {
      EXPECT_FALSE(plan.known[v]) << v;
      EXPECT_EQ(plan.placement[v], runtime::Placement::kOwned) << v;  // sized when made, never copied
    }
  }
}

}  // namespace
}  // namespace sg::testing
