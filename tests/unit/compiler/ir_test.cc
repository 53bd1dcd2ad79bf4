// The IR's symbol table, type formatting, text form and verifier.
#include <gtest/gtest.h>

#include <string>

#include "compiler/ir_test_modules.h"
#include "ir/ir.h"

namespace sg::compiler {
namespace {

using testing::make_control_module;
using testing::make_mlp_module;

TEST(SymbolTable, InternReturnsTheSameIdForTheSameName) {
  ir::SymbolTable s;
  EXPECT_EQ(s.intern("N"), 0);
  EXPECT_EQ(s.intern("M"), 1);
  EXPECT_EQ(s.intern("N"), 0);
  EXPECT_EQ(s.names.size(), 2u);
}

TEST(SymbolTable, FreshNamesAreNewAndDerivedFromTheHint) {
  ir::SymbolTable s;
  s.intern("N");
  const int32_t a = s.fresh("N");
  const int32_t b = s.fresh("N");
  const int32_t c = s.fresh("N#1");  // a derived name stays one level deep
  EXPECT_EQ(s.name(a), "N#1");
  EXPECT_EQ(s.name(b), "N#2");
  EXPECT_EQ(s.name(c), "N#3");
  EXPECT_EQ(s.intern("N#2"), b);
  EXPECT_EQ(s.name(s.fresh("")), "D#1");
}

TEST(Module, FormatsDimsShapesAndTypes) {
  ir::Module m;
  const ir::Dim n = ir::Dim::symbol(m.symbols.intern("N"));
  const ir::Dim d = ir::Dim::symbol(m.symbols.fresh("N"));
  EXPECT_EQ(m.format_dim(n), "N");
  EXPECT_EQ(m.format_dim(n * ir::Dim(2)), "N*2");
  EXPECT_EQ(m.format_dim(d), "N#1");
  EXPECT_EQ(m.format_dim(ir::Dim(7)), "7");
  EXPECT_EQ(m.format_shape({n, 784}), "[N, 784]");
  EXPECT_EQ(m.format_shape({}), "[]");
  EXPECT_EQ(m.format_type(ir::Type{DType::kI64, {n - ir::Dim(1), 3}}), "i64[N-1, 3]");
  EXPECT_EQ(m.format_type(ir::Type{DType::kBool, {}}), "bool[]");
  // A broken module must still print: the verifier's messages use these.
  EXPECT_EQ(m.format_dim(ir::Dim::symbol(9)), "?9");
}

TEST(Print, MlpModule) {
  auto tm = make_mlp_module();
  EXPECT_EQ(ir::print(tm->module),
            "symbols N\n"
            "\n"
            "func mlp(%x: f32[N, 4], %w: f32[4, 3]) -> (%8: f32[N, 1]) {\n"
            "  %b = const f32[3] #0 = [0.5, -1, 2]\n"
            "  %3 = const i64[] #1 = 7\n"
            "  %table = const f32[5, 10] #2\n"
            "  %5: f32[N, 3] = matmul(%x, %w)                  # models/mlp.py:4:9\n"
            "  %6: f32[N, 3] = add(%5, %b)                     # models/mlp.py:4:16\n"
            "  %h: f32[N, 3] = relu(%6)                        # models/mlp.py:4:5\n"
            "  %8: f32[N, 1] = sum(%h) {axes=[1], keepdims=1}  # models/mlp.py:5:12\n"
            "  return %8\n"
            "}\n"
            "\n"
            "entry mlp = @mlp (x, w) -> (output_0)\n");
}

TEST(Print, ControlFlowModule) {
  auto tm = make_control_module();
  EXPECT_EQ(ir::print(tm->module),
            "symbols K\n"
            "\n"
            "func main(%c: bool[], %a: f32[K]) -> (%picked: f32[K], %6: f32[K*2], %mask: bool[3]) {\n"
            "  %mask = const bool[3] #0 = [true, false, true]\n"
            "  %empty = const f32[0] #1\n"
            "  %i.4 = const i64[] #2 = 0\n"
            "  %picked: f32[K] = if %c then @then_1 else @else_2 (%a)  # control.py:5:5\n"
            "  %6: f32[K*2] = call @twice (%a)                 # control.py:8:12\n"
            "  %i.7: i64[] = while @cond_3 do @body_4 (%i.4)   # control.py:9:5\n"
            "  return %picked, %6, %mask\n"
            "}\n"
            "\n"
            "func then_1(%a: f32[K]) -> (%1: f32[K]) {\n"
            "  %1: f32[K] = add(%a, %a)                        # control.py:6:9\n"
            "  return %1\n"
            "}\n"
            "\n"
            "func else_2(%a: f32[K]) -> (%1: f32[K]) {\n"
            "  %1: f32[K] = sub(%a, %a)                        # control.py:6:9\n"
            "  return %1\n"
            "}\n"
            "\n"
            "func twice(%v: f32[K]) -> (%1: f32[K*2]) {\n"
            "  %1: f32[K*2] = concatenate(%v, %v) {axis=0}     # control.py:2:12\n"
            "  return %1\n"
            "}\n"
            "\n"
            "func cond_3(%i: i64[]) -> (%2: bool[]) {\n"
            "  %1 = const i64[] #3 = 3\n"
            "  %2: bool[] = less(%i, %1)                       # control.py:9:11\n"
            "  return %2\n"
            "}\n"
            "\n"
            "func body_4(%i.0: i64[]) -> (%i.2: i64[]) {\n"
            "  %1 = const i64[] #4 = 1\n"
            "  %i.2: i64[] = add(%i.0, %1)                     # control.py:10:9\n"
            "  return %i.2\n"
            "}\n"
            "\n"
            "entry main = @main (c, a) -> (picked, doubled, mask)\n");
}

TEST(Print, CastShowsItsDtypeByName) {
  ir::Module m;
  m.functions.emplace_back();
  ir::Function& f = m.functions.back();
  f.name = "f";
  const int32_t x = f.add_value(ir::Type{DType::kI32, {2}}, "x");
  const int32_t y = f.add_value(ir::Type{DType::kF32, {2}});
  f.params = {x};
  ops::Attrs a;
  a.values = {ops::AttrValue::Int(int64_t(DType::kF32))};
  f.nodes.push_back(testing::op_node(ops::OpId::Cast, {x}, {y}, {}, a));
  f.results = {y};
  EXPECT_NE(ir::print(m).find("  %1: f32[2] = cast(%x) {dtype=f32}\n"), std::string::npos) << ir::print(m);
}

// ---- the verifier ---------------------------------------------------------------

TEST(Verify, AcceptsWellFormedModules) {
  EXPECT_EQ(ir::verify(make_mlp_module()->module), "");
  EXPECT_EQ(ir::verify(make_control_module()->module), "");
  EXPECT_EQ(ir::verify(ir::Module{}), "");
}

// Breaks a copy of a module with `mutate` and expects a message containing `needle`.
template <class Make, class Mutate>
void expect_rejected(Make make, Mutate mutate, const std::string& needle) {
  auto tm = make();
  mutate(tm->module);
  const std::string msg = ir::verify(tm->module);
  EXPECT_NE(msg.find(needle), std::string::npos) << "message: '" << msg << "', expected '" << needle << "'";
}

TEST(Verify, RejectsBrokenValueReferences) {
  expect_rejected(make_mlp_module, [](ir::Module& m) { m.functions[0].nodes[0].inputs[0] = 99; }, "out of range");
  expect_rejected(make_mlp_module, [](ir::Module& m) { m.functions[0].nodes[0].inputs[0] = -1; }, "out of range");
  expect_rejected(make_mlp_module, [](ir::Module& m) { std::swap(m.functions[0].nodes[0], m.functions[0].nodes[1]); },
                  "used before it is defined");
  expect_rejected(make_mlp_module, [](ir::Module& m) { m.functions[0].nodes[1].outputs[0] = 5; }, "defined twice");
  expect_rejected(make_mlp_module, [](ir::Module& m) { m.functions[0].nodes[0].outputs[0] = 0; }, "defined twice");
  expect_rejected(make_mlp_module, [](ir::Module& m) { m.functions[0].nodes.pop_back(); }, "results");
  expect_rejected(make_mlp_module, [](ir::Module& m) { m.functions[0].params.push_back(2); }, "is a constant");
  expect_rejected(make_mlp_module, [](ir::Module& m) { m.functions[0].nodes[0].outputs[0] = 2; }, "is a constant");
}

TEST(Verify, RejectsWrongArityAndAttributes) {
  expect_rejected(make_mlp_module, [](ir::Module& m) { m.functions[0].nodes[0].inputs.push_back(0); }, "3 inputs");
  expect_rejected(make_mlp_module, [](ir::Module& m) { m.functions[0].nodes[2].outputs.push_back(5); }, "2 outputs");
  expect_rejected(make_mlp_module, [](ir::Module& m) { m.functions[0].nodes[3].attrs.values.pop_back(); },
                  "1 attributes, expected 2");
  expect_rejected(make_mlp_module,
                  [](ir::Module& m) { m.functions[0].nodes[3].attrs.values[1] = ops::AttrValue::Float(1); },
                  "attribute 'keepdims' has the wrong kind");
  expect_rejected(make_mlp_module, [](ir::Module& m) { m.functions[0].nodes[0].op = ops::OpId(ops::kNumOps); },
                  "op id");
  expect_rejected(make_mlp_module, [](ir::Module& m) { m.functions[0].nodes[0].functions = {0}; },
                  "refers to functions");
}

TEST(Verify, RejectsBadTypesAndConstants) {
  expect_rejected(make_mlp_module, [](ir::Module& m) { m.constants[0].bytes.pop_back(); }, "11 bytes for 3 elements");
  expect_rejected(make_mlp_module, [](ir::Module& m) { m.functions[0].values[2].type.shape = {4}; },
                  "differs from constant #0");
  expect_rejected(make_mlp_module, [](ir::Module& m) { m.functions[0].values[2].constant = 9; },
                  "constant id 9 out of range");
  expect_rejected(make_mlp_module, [](ir::Module& m) { m.functions[0].values[0].type.shape[0] = ir::Dim::symbol(5); },
                  "symbol id 5 out of range");
  expect_rejected(make_mlp_module, [](ir::Module& m) { m.functions[0].values[1].type.shape[0] = ir::Dim(-2); },
                  "negative dim");
  expect_rejected(make_mlp_module, [](ir::Module& m) { m.functions[0].nodes[0].span.file = 3; },
                  "source file id 3");
}

TEST(Verify, RejectsControlFlowMismatches) {
  expect_rejected(make_control_module, [](ir::Module& m) { m.functions[0].nodes[0].inputs[0] = 1; },
                  "first input must be a bool scalar");
  expect_rejected(make_control_module, [](ir::Module& m) { m.functions[0].nodes[0].functions = {1}; },
                  "refers to 1 functions, expected 2");
  expect_rejected(make_control_module, [](ir::Module& m) { m.functions[0].nodes[0].functions[1] = 17; },
                  "function id 17 out of range");
  expect_rejected(make_control_module, [](ir::Module& m) { m.functions[2].params.clear(); },
                  "1 inputs but function 'else_2' has 0");
  expect_rejected(make_control_module, [](ir::Module& m) { m.functions[3].values[1].type.dtype = DType::kF16; },
                  "outputs 0 is f32[K*2] but function 'twice' has f16[K*2]");
  expect_rejected(make_control_module, [](ir::Module& m) { m.functions[1].values[0].type.shape = {ir::Dim(3), 1}; },
                  "inputs 0 is f32[K] but function 'then_1' has f32[3, 1]");
  expect_rejected(make_control_module, [](ir::Module& m) { m.functions[4].values[2].type.dtype = DType::kI32; },
                  "must return one bool scalar");
  expect_rejected(make_control_module, [](ir::Module& m) { m.functions[5].results.push_back(0); },
                  "while body");
  expect_rejected(make_control_module, [](ir::Module& m) { m.functions[0].nodes[1].attrs.values.push_back({}); },
                  "control node has attributes");
}

TEST(Verify, AcceptsSymbolicDimsAcrossFunctionBoundaries) {
  // A branch result joined from [3] and [4] is [K] in the caller.
  auto tm = make_control_module();
  tm->module.functions[1].values[1].type.shape = {ir::Dim(3)};
  tm->module.functions[1].values[0].type.shape = {ir::Dim(3)};
  EXPECT_EQ(ir::verify(tm->module), "");
}

TEST(Verify, RejectsBrokenEntries) {
  expect_rejected(make_mlp_module, [](ir::Module& m) { m.entries[0].function = 4; }, "function id 4 out of range");
  expect_rejected(make_mlp_module, [](ir::Module& m) { m.entries[0].input_names.pop_back(); }, "1 input and 1 output");
  expect_rejected(make_mlp_module, [](ir::Module& m) { m.entries[0].input_names[1] = "x"; }, "repeated");
  expect_rejected(make_mlp_module, [](ir::Module& m) { m.entries.push_back(m.entries[0]); }, "exported twice");
  expect_rejected(make_mlp_module, [](ir::Module& m) { m.functions[0].name.clear(); }, "has no name");
}

}  // namespace
}  // namespace sg::compiler
