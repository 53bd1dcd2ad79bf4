// Semantic checks on load (SPEC §10): every inconsistency is refused with a
// message, before anything runs.
#include <gtest/gtest.h>

#include <cmath>
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

// elementwise_chain's steps are checked on load: a step naming an op it cannot
// chain, or an operand that is not an input or an earlier step, refuses the file
// and names the node's step; well-formed steps load and run.
TEST(Verify, ElementwiseChainStepsAreCheckedOnLoad) {
  const auto chain_graph = [](std::vector<int64_t> steps) {
    GraphSpec g;
    FunctionSpec f;
    f.name = "chain";
    const uint32_t x = f.param(DType::kF32, shape({2, 3}));
    const uint32_t y = f.param(DType::kF32, shape({2, 3}));
    f.results = {f.op("elementwise_chain", {x, y}, DType::kF32, shape({2, 3}), 4, 9)};
    f.nodes.back().attrs = {{"steps", ops::AttrValue::Ints(std::move(steps))}};
    g.add_function(std::move(f));
    g.add_entry("chain", 0, {"x", "y"}, {"z"});
    return g;
  };
  const int64_t add = int64_t(ops::OpId::Add), tanh = int64_t(ops::OpId::Tanh), exp = int64_t(ops::OpId::Exp);
  EXPECT_EQ(error_of(chain_graph({add, 0, 1, tanh, 2, -1})), "(loaded)");
  EXPECT_REFUSED(chain_graph({add, 0, 1, tanh, 5, -1}), "step 1: operand 5 is not an input or an earlier step");
  EXPECT_REFUSED(chain_graph({exp, 0, -1}), "step 0: op 19 cannot be chained");
  EXPECT_REFUSED(chain_graph({add, 0}), "steps must be 1 to 16 (op, a, b) triples");
  EXPECT_REFUSED(chain_graph({tanh, 0, 1}), "is not -1 (a unary op)");

  auto program = load_ok(chain_graph({add, 0, 1, tanh, 2, -1}));
  ASSERT_NE(program, nullptr);
  auto s = Session::create(program, "chain");
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->set_input("x", make_tensor<float>(DType::kF32, {2, 3}, {0, 1, 2, 3, 4, 5})).ok());
  ASSERT_TRUE((*s)->set_input("y", make_tensor<float>(DType::kF32, {2, 3}, {0, -1, 0, 0, 0, 0})).ok());
  ASSERT_TRUE((*s)->run().ok());
  const std::vector<float> z = values_of<float>((*s)->output(0));
  EXPECT_EQ(z[0], 0.0f);
  EXPECT_EQ(z[1], 0.0f);
  EXPECT_NEAR(z[2], std::tanh(2.0f), 1e-6f);
}

// A chain with several outputs (`outputs`): the node must have one per listed step.
TEST(Verify, ElementwiseChainOutputsAreCheckedOnLoad) {
  const auto chain_graph = [](std::vector<int64_t> outputs, size_t n_out) {
    GraphSpec g;
    FunctionSpec f;
    f.name = "chain";
    const uint32_t x = f.param(DType::kF32, shape({2, 3}));
    const uint32_t y = f.param(DType::kF32, shape({2, 3}));
    f.op("elementwise_chain", {x, y}, DType::kF32, shape({2, 3}), 4, 9);
    for (size_t k = 1; k < n_out; ++k) f.nodes.back().outputs.push_back(f.value(DType::kF32, shape({2, 3})));
    const int64_t add = int64_t(ops::OpId::Add), tanh = int64_t(ops::OpId::Tanh);
    f.nodes.back().attrs = {{"steps", ops::AttrValue::Ints({add, 0, 1, tanh, 2, -1})},
                            {"outputs", ops::AttrValue::Ints(std::move(outputs))}};
    f.results = f.nodes.back().outputs;
    g.add_function(std::move(f));
    std::vector<std::string> names;
    for (size_t k = 0; k < n_out; ++k) names.push_back("z" + std::to_string(k));
    g.add_entry("chain", 0, {"x", "y"}, names);
    return g;
  };
  EXPECT_EQ(error_of(chain_graph({0, 1}, 2)), "(loaded)");
  EXPECT_EQ(error_of(chain_graph({}, 1)), "(loaded)");  // as without the attribute
  EXPECT_REFUSED(chain_graph({0, 1}, 1), "has 1 outputs, expected 2");
  EXPECT_REFUSED(chain_graph({1}, 2), "has 2 outputs, expected 1");
  EXPECT_REFUSED(chain_graph({1, 0}, 2), "outputs must be increasing steps");
  EXPECT_REFUSED(chain_graph({0}, 1), "the last output must be the last step's result");

  auto program = load_ok(chain_graph({0, 1}, 2));
  ASSERT_NE(program, nullptr);
  auto s = Session::create(program, "chain");
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->set_input("x", make_tensor<float>(DType::kF32, {2, 3}, {0, 1, 2, 3, 4, 5})).ok());
  ASSERT_TRUE((*s)->set_input("y", make_tensor<float>(DType::kF32, {2, 3}, {0, -1, 0, 0, 0, 0})).ok());
  ASSERT_TRUE((*s)->run().ok());
  const std::vector<float> sum = values_of<float>((*s)->output(0)), z = values_of<float>((*s)->output(1));
  EXPECT_EQ(sum, (std::vector<float>{0, 0, 2, 3, 4, 5}));
  EXPECT_EQ(z[1], 0.0f);
  EXPECT_NEAR(z[2], std::tanh(2.0f), 1e-6f);
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
  EXPECT_REFUSED(g, "entry 'affine': 2 inputs and 0 variables but its function has 1");
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

// def project(x: f32["N", 3]): return x @ W + b     (W: [3, 4] and b: [4], constants)
// Values: 0 x, 1 W, 2 b, 3 x @ W, 4 the sum.
GraphSpec project_graph() {
  GraphSpec g;
  g.symbols = {"N"};
  const int32_t w = g.add_constant<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  const int32_t b = g.add_constant<float>({1, 2, 3, 4});
  FunctionSpec f;
  f.name = "project";
  const uint32_t x = f.param(DType::kF32, {sym(0), {3, -1}});
  const uint32_t kw = f.value(DType::kF32, shape({3, 4}), w);
  const uint32_t kb = f.value(DType::kF32, shape({4}), b);
  const uint32_t xw = f.op("matmul", {x, kw}, DType::kF32, {sym(0), {4, -1}}, 5, 12);
  f.results = {f.op("add", {xw, kb}, DType::kF32, {sym(0), {4, -1}}, 5, 16)};
  g.add_entry("project", g.add_function(std::move(f)), {"x"}, {"output_0"});
  return g;
}

TEST(Verify, DeclaredOutputsFollowTheShapeRules) {
  EXPECT_EQ(error_of(project_graph()), "(loaded)");

  // The output and the entry's signature both edited to [N, 5]: the rule gives [N, 4].
  GraphSpec g = project_graph();
  g.functions[0].values[4].shape = {sym(0), {5, -1}};
  g.entries[0].outputs[0].shape = {sym(0), {5, -1}};
  EXPECT_REFUSED(g, "function 'project': node 1 ('add') at model.py:5:16: output 0 is declared f32[N, 5] "
                    "but the op's shape rule gives f32[N, 4] for inputs f32[N, 4], f32[4]");
  // A wrong dtype, a wrong rank.
  g = project_graph();
  g.functions[0].values[3].dtype = DType::kF16;
  EXPECT_REFUSED(g, "node 0 ('matmul') at model.py:5:12: output 0 is declared f16[N, 4] but the op's shape "
                    "rule gives f32[N, 4]");
  g = project_graph();
  g.functions[0].values[3].shape = {sym(0), {4, -1}, {1, -1}};
  EXPECT_REFUSED(g, "output 0 is declared f32[N, 4, 1] but the op's shape rule gives f32[N, 4]");
  // The symbolic batch dim declared static: no binding contradicts it, so it is
  // left to the run (the executor checks dynamic nodes again).
  g = project_graph();
  g.functions[0].values[3].shape = shape({2, 4});
  EXPECT_EQ(error_of(g), "(loaded)");
}

TEST(Verify, ConstantsMatchTheNodesTheyFeed) {
  // W declared [4, 3]: the same 48 bytes, but x[N, 3] @ W[4, 3] is refused on load.
  GraphSpec g = project_graph();
  g.functions[0].values[1].shape = shape({4, 3});
  EXPECT_REFUSED(g, "node 0 ('matmul') at model.py:5:12: its inputs' declared types (f32[N, 3], f32[4, 3]) "
                    "fail the op's shape rule: matmul: inner dimensions differ");
  // b declared [2, 2] (16 bytes): [N, 4] + [2, 2] cannot broadcast.
  g = project_graph();
  g.functions[0].values[2].shape = shape({2, 2});
  EXPECT_REFUSED(g, "node 1 ('add') at model.py:5:16: its inputs' declared types (f32[N, 4], f32[2, 2]) "
                    "fail the op's shape rule: add: cannot broadcast");
}

TEST(Verify, SymbolicAndValueDependentShapesAreLeftToTheRun) {
  // Independent symbols are never equated or told apart: [N, 3] + [M, 3] declared [M, 3].
  GraphSpec g = pair_graph();
  g.functions[0].values[3].shape = {sym(1), {3, -1}};
  EXPECT_EQ(error_of(g), "(loaded)");
  // A symbol the compiler derived ("N*2") is opaque, not expanded.
  g = affine_graph();
  g.symbols.push_back("N*2");
  g.functions[0].values[3].shape = {sym(1), {3, -1}};
  EXPECT_EQ(error_of(g), "(loaded)");

  // arange(start, stop, step) with staged bounds: the length is the run's to find.
  GraphSpec a;
  a.symbols = {"D1"};
  FunctionSpec f;
  f.name = "ramp";
  const uint32_t lo = f.param(DType::kI64, {}), hi = f.param(DType::kI64, {}), step = f.param(DType::kI64, {});
  f.results = {f.op("arange", {lo, hi, step}, DType::kI64, {sym(0)}, 2, 10)};
  a.add_entry("ramp", a.add_function(std::move(f)), {"lo", "hi", "step"}, {"output_0"});
  EXPECT_EQ(error_of(a), "(loaded)");
  GraphSpec s = a;
  s.functions[0].values[3].shape = shape({5});
  s.entries[0].outputs[0].shape = shape({5});
  EXPECT_EQ(error_of(s), "(loaded)");
  s = a;
  s.functions[0].values[3].dtype = DType::kI32;
  s.entries[0].outputs[0].dtype = DType::kI32;
  EXPECT_REFUSED(s, "node 0 ('arange') at model.py:2:10: output 0 is declared i32[D1] but the op's shape rule "
                    "gives i64[");
  s = a;
  s.functions[0].values[3].shape = {};
  s.entries[0].outputs[0].shape = {};
  EXPECT_REFUSED(s, "output 0 is declared i64[] but the op's shape rule gives i64[");
}

TEST(Verify, ImplausibleSizes) {
  // 2^40 f32 elements (4 TiB): no tensor of any device; refused before anything is planned.
  GraphSpec g = affine_graph();
  g.functions[0].values[3].shape = {sym(0), {int64_t(1) << 40, -1}};
  EXPECT_REFUSED(g, "value 3 has an implausible size: its static dims need more than 2^40 bytes");
  g = affine_graph();
  g.functions[0].values[3].shape = shape({int64_t(1) << 31, int64_t(1) << 31, 0});
  EXPECT_REFUSED(g, "value 3 has an implausible size");
  g = affine_graph();
  g.functions[0].values[3].shape = shape({INT64_MAX, INT64_MAX});
  EXPECT_REFUSED(g, "value 3 has an implausible size");
  // Symbolic dims count as 1; an entry signature is bounded by the value it must equal.
  g = affine_graph();
  g.entries[0].inputs[0].shape = {sym(0), {int64_t(1) << 40, -1}};
  EXPECT_REFUSED(g, "does not match its function's value type");
}

TEST(Verify, EntrySignaturesMatchTheirValuesDimByDim) {
  GraphSpec g = affine_graph();
  g.entries[0].inputs[0].shape = {sym(0), {4, -1}};
  EXPECT_REFUSED(g, "entry 'affine': inputs 'x' is f32[N, 4], which does not match its function's value type "
                    "f32[N, 3]");
  g = affine_graph();
  g.entries[0].outputs[0].shape = shape({2, 3});  // static where the value is symbolic
  EXPECT_REFUSED(g, "outputs 'output_0' is f32[2, 3], which does not match its function's value type f32[N, 3]");
  g = pair_graph();
  g.entries[0].inputs[2].shape = {sym(0), {3, -1}};  // N where the parameter has M
  EXPECT_REFUSED(g, "inputs 'z' is f32[N, 3], which does not match its function's value type f32[M, 3]");
  // The same name under two symbol indices is the same dim.
  g = affine_graph();
  g.symbols.push_back("N");
  g.entries[0].inputs[0].shape = {sym(1), {3, -1}};
  EXPECT_EQ(error_of(g), "(loaded)");
}

TEST(Verify, SourceLocations) {
  GraphSpec g = affine_graph();
  g.functions[0].nodes[0].file = 4;
  EXPECT_REFUSED(g, "source file index 4 is out of range");
}

}  // namespace
}  // namespace sg::testing
