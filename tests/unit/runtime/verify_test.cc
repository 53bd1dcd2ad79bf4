// Semantic checks on load (SPEC §10): every inconsistency is refused with a
// message, before anything runs.
#include <gtest/gtest.h>

#include <string>

#include "test_graphs.h"
#include "test_util.h"

namespace sg::testing {
namespace {

// Loads `g` and returns the error message ("(loaded)" when it loads).
std::string error_of(const GraphSpec& g) {
  auto p = load_owned(build_sgraph(g));
  if (p.ok()) return "(loaded)";
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidGraph);
  return p.status().message();
}

#define EXPECT_REFUSED(graph, text)                                    \
  do {                                                                 \
    const std::string msg_ = error_of(graph);                          \
    EXPECT_NE(msg_.find(text), std::string::npos) << "message: " << msg_; \
  } while (0)

TEST(Verify, ValidGraphsLoad) {
  EXPECT_EQ(error_of(affine_graph()), "(loaded)");
  EXPECT_EQ(error_of(pair_graph()), "(loaded)");
  EXPECT_EQ(error_of(while_sum_graph()), "(loaded)");
  EXPECT_EQ(error_of(recursive_graph("mul", 1, 1)), "(loaded)");
}

TEST(Verify, UnknownOpIsNamed) {
  GraphSpec g = affine_graph();
  g.functions[0].nodes[1].op = "frobnicate";
  EXPECT_REFUSED(g, "unknown op 'frobnicate'");
}

TEST(Verify, NewerOpVersionIsNamed) {
  GraphSpec g = affine_graph();
  g.functions[0].nodes[0].version = 3;
  EXPECT_REFUSED(g, "op 'mul' version 3 is not supported by this runtime (have 1)");
  GraphSpec r = recursive_graph("add", 0, 0);
  r.functions[2].nodes[1].version = 2;  // the Call node
  EXPECT_REFUSED(r, "op 'call' version 2 is not supported by this runtime (have 1)");
}

TEST(Verify, ValueIndicesInRangeAndDefinedBeforeUse) {
  GraphSpec g = affine_graph();
  g.functions[0].nodes[0].inputs[0] = 99;
  EXPECT_REFUSED(g, "input value 99 is out of range");
  g = affine_graph();
  g.functions[0].nodes[1].outputs[0] = 1234;
  EXPECT_REFUSED(g, "output value 1234 is out of range");
  g = affine_graph();
  std::swap(g.functions[0].nodes[0], g.functions[0].nodes[1]);
  EXPECT_REFUSED(g, "used before it is defined");
  g = affine_graph();
  g.functions[0].nodes[1].outputs[0] = g.functions[0].nodes[0].outputs[0];
  EXPECT_REFUSED(g, "defined more than once");
  g = affine_graph();
  g.functions[0].nodes[0].outputs[0] = 0;  // the parameter
  EXPECT_REFUSED(g, "defined more than once");
  g = affine_graph();
  g.functions[0].results = {g.functions[0].value(DType::kF32, {})};
  EXPECT_REFUSED(g, "never defined");
  g = affine_graph();
  g.functions[0].params.push_back(500);
  EXPECT_REFUSED(g, "parameter value index 500 is out of range");
}

TEST(Verify, ArityAndAttributes) {
  GraphSpec g = affine_graph();
  g.functions[0].nodes[0].inputs.pop_back();
  EXPECT_REFUSED(g, "takes 1 inputs, expected 2");
  g = affine_graph();
  g.functions[0].nodes[0].outputs.push_back(g.functions[0].value(DType::kF32, {}));
  EXPECT_REFUSED(g, "has 2 outputs, expected 1");
  g = affine_graph();
  g.functions[0].nodes[0].attrs.push_back({"axis", ops::AttrValue::Int(0)});
  EXPECT_REFUSED(g, "op 'mul' has no attribute 'axis'");

  // sum(x, axes, keepdims): a missing, a mistyped, and an out-of-range attribute.
  g = affine_graph();
  FunctionSpec& f = g.functions[0];
  const uint32_t s = f.op("sum", {0}, DType::kF32, {});
  f.results = {s};
  g.entries[0].outputs[0].shape = {};
  f.nodes.back().attrs = {{"axes", ops::AttrValue::Ints({0, 1})}};
  EXPECT_REFUSED(g, "missing attribute 'keepdims'");
  f.nodes.back().attrs = {{"axes", ops::AttrValue::Int(0)}, {"keepdims", ops::AttrValue::Int(0)}};
  EXPECT_REFUSED(g, "attribute 'axes' is an int but op 'sum' takes a list of ints");
  f.nodes.back().attrs = {{"axes", ops::AttrValue::Ints({0, 1})}, {"keepdims", ops::AttrValue::Int(0)},
                          {"axes", ops::AttrValue::Ints({0})}};
  EXPECT_REFUSED(g, "given twice");
  f.nodes.back().attrs = {{"axes", ops::AttrValue::Ints({0, 1})}, {"keepdims", ops::AttrValue::Int(0)}};
  EXPECT_EQ(error_of(g), "(loaded)");
  f.nodes.back().attrs = {{"axes", ops::AttrValue::Ints({0, 7})}, {"keepdims", ops::AttrValue::Int(0)}};
  EXPECT_NE(error_of(g), "(loaded)");  // check_attrs: axis 7 of a rank-2 input
}

TEST(Verify, DTypesShapesAndSymbols) {
  GraphSpec g = affine_graph();
  g.functions[0].values[3].dtype = DType(9);
  EXPECT_REFUSED(g, "invalid dtype 9");
  g = affine_graph();
  g.functions[0].values[3].shape = shape({1, 1, 1, 1, 1, 1, 1, 1, 1});
  EXPECT_REFUSED(g, "rank 9, more than the maximum 8");
  g = affine_graph();
  g.functions[0].values[3].shape = shape({-4, 3});
  EXPECT_REFUSED(g, "is negative (-4)");
  g = affine_graph();
  g.functions[0].values[3].shape = {sym(5), {3, -1}};
  EXPECT_REFUSED(g, "refers to symbol 5 of 1");
  g = affine_graph();
  g.entries[0].inputs[0].shape = {sym(3), {3, -1}};
  EXPECT_REFUSED(g, "has an invalid dim");
}

TEST(Verify, Constants) {
  GraphSpec g = affine_graph();
  g.functions[0].values[2].constant = 7;
  EXPECT_REFUSED(g, "refers to constant 7 of 2");
  g = affine_graph();
  g.functions[0].values[2].constant = -3;
  EXPECT_REFUSED(g, "invalid constant index -3");
  g = affine_graph();
  g.functions[0].values[2].shape = shape({2});  // 8 bytes wanted, 12 stored
  EXPECT_REFUSED(g, "holds 12 bytes but its type needs 8");
  g = affine_graph();
  g.functions[0].values[2].shape = {sym(0)};
  EXPECT_REFUSED(g, "constant with a symbolic dim");
  g = affine_graph();
  g.constant_table_override = {{0, 4}, {32, 12}};
  EXPECT_REFUSED(g, "constant 1 is not 64-byte aligned");
  g = affine_graph();
  g.constant_table_override = {{0, 4}, {64, 100000}};
  EXPECT_REFUSED(g, "lies outside the");
  g = affine_graph();
  g.constant_table_override = {{0, 4}, {~uint64_t(0) - 63, 12}};
  EXPECT_REFUSED(g, "lies outside the");
  g = affine_graph();
  g.constant_table_override = {{0, 4}, {64, 100}};  // into the tail padding
  EXPECT_REFUSED(g, "or its padding");
}

TEST(Verify, ControlFlowSignatures) {
  GraphSpec g = recursive_graph("mul", 1, 1);
  g.functions[0].nodes[1].functions = {1, 9};
  EXPECT_REFUSED(g, "function index 9 is out of range");
  g = recursive_graph("mul", 1, 1);
  g.functions[0].nodes[1].inputs[0] = 0;  // an i64 as the condition
  EXPECT_REFUSED(g, "the condition must be a bool scalar");
  g = recursive_graph("mul", 1, 1);
  g.functions[0].nodes[1].functions = {1};
  EXPECT_REFUSED(g, "names 1 functions, expected 2");
  g = recursive_graph("mul", 1, 1);
  g.functions[1].values[0].dtype = DType::kF32;  // rec_base takes f32
  EXPECT_REFUSED(g, "inputs 0 is i64 but function 'rec_base' has f32");
  g = recursive_graph("mul", 1, 1);
  g.functions[2].nodes[1].functions = {1};  // Call rec_base: same signature, allowed
  EXPECT_EQ(error_of(g), "(loaded)");
  g.functions[2].nodes[1].inputs.push_back(0);
  EXPECT_REFUSED(g, "function 'rec_base' has 1 parameters but the node has 2 inputs");

  // Recursion only through Call (counted against the depth limit), never If/While.
  g = recursive_graph("mul", 1, 1);
  g.functions[0].nodes[1].functions = {1, 0};
  EXPECT_REFUSED(g, "function 'rec' reaches itself through If/While nodes (recursion must go through Call)");

  GraphSpec w = while_sum_graph();
  w.functions[1].values[3].dtype = DType::kI32;  // cond returns i32
  EXPECT_REFUSED(w, "must return a bool scalar");
  w = while_sum_graph();
  w.functions[0].nodes[0].functions = {2, 1};  // body as cond returns three values
  EXPECT_NE(error_of(w), "(loaded)");
  w = while_sum_graph();
  w.functions[0].nodes[0].outputs.pop_back();
  EXPECT_REFUSED(w, "has 2 outputs for 3 loop-carried inputs");
}

TEST(Verify, Entries) {
  GraphSpec g = affine_graph();
  g.entries[0].function = 3;
  EXPECT_REFUSED(g, "entry 'affine' refers to function 3 of 1");
  g = affine_graph();
  g.entries[0].inputs.push_back({"w", DType::kF32, {}});
  EXPECT_REFUSED(g, "entry 'affine': 2 inputs but its function has 1");
  g = affine_graph();
  g.entries[0].inputs[0].dtype = DType::kI32;
  EXPECT_REFUSED(g, "does not match its function's value type");
  g = affine_graph();
  g.entries[0].outputs[0].shape = shape({3});
  EXPECT_REFUSED(g, "does not match its function's value type");
  g = affine_graph();
  g.entries.push_back(g.entries[0]);
  EXPECT_REFUSED(g, "duplicate entry 'affine'");
}

TEST(Verify, SourceLocations) {
  GraphSpec g = affine_graph();
  g.functions[0].nodes[0].file = 4;
  EXPECT_REFUSED(g, "source file index 4 is out of range");
}

}  // namespace
}  // namespace sg::testing
