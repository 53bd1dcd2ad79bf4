// Dead code elimination and common subexpression elimination.
#include <gtest/gtest.h>

#include "compiler/passes_test_util.h"

namespace sg::compiler {
namespace {

using namespace testing;
using ops::OpId;

TEST(DeadCode, RemovesUnusedNodesValuesAndConstantsButKeepsEffects) {
  auto tm = make_single({{"x", t(DType::kF32, {3})}});
  ir::Module& m = tm->module;
  ir::Function& f = m.functions[0];
  const int32_t x = f.params[0];
  const int32_t unused_k = add_constant_value(m, f, make_constant<float>(DType::kF32, {2}, {1, 2}), "unused");
  const int32_t e = f.add_value(t(DType::kF32, {3}), "e");
  const int32_t dead = f.add_value(t(DType::kF32, {2}), "dead");
  const int32_t y = f.add_value(t(DType::kF32, {3}), "y");
  f.nodes.push_back(op_node(OpId::Exp, {x}, {e}));
  f.nodes.push_back(op_node(OpId::Neg, {unused_k}, {dead}));
  f.nodes.push_back(op_node(OpId::Print, {e}, {}, {}, attrs_of({ops::AttrValue::String("e={}")})));
  f.nodes.push_back(op_node(OpId::Abs, {x}, {y}));
  set_results(m, {x});
  EXPECT_EQ(run_pass(passes::eliminate_dead_code, m),
            "func f(%x: f32[3]) -> (%x: f32[3]) {\n"
            "  %e: f32[3] = exp(%x)\n"
            "  print(%e) {format=\"e={}\"}\n"
            "  return %x\n"
            "}\n"
            "\n"
            "entry f = @f (x) -> (output_0)\n");
  EXPECT_TRUE(m.constants.empty());
}

TEST(DeadCode, KeepsControlNodesWhoseCalleesHaveEffectsAndDropsUnreachedFunctions) {
  auto tm = make_control_module();
  ir::Module& m = tm->module;
  // Nothing uses the If's result now; the else branch prints, so the If stays.
  m.functions[0].results[0] = m.functions[0].params[1];
  ir::Function& other = m.functions[2];
  other.nodes.push_back(op_node(OpId::Print, {}, {}, {}, attrs_of({ops::AttrValue::String("else")})));
  // The While's result is unused and its functions have no effect: it goes,
  // and with it cond and body.
  run_pass(passes::eliminate_dead_code, m);
  ASSERT_EQ(m.functions.size(), 4u);
  EXPECT_EQ(m.functions[0].nodes.size(), 2u);
  EXPECT_EQ(m.functions[0].nodes[0].kind, ir::NodeKind::kIf);
  EXPECT_EQ(m.functions[0].nodes[1].kind, ir::NodeKind::kCall);
  EXPECT_EQ(m.functions[3].name, "twice");
  EXPECT_EQ(m.functions[0].nodes[1].functions[0], 3);
  EXPECT_EQ(m.constants.size(), 1u);  // the mask; the loop's counters and the empty one are gone

  // Without the print the If goes too.
  m.functions[2].nodes.pop_back();
  run_pass(passes::eliminate_dead_code, m);
  EXPECT_EQ(m.functions.size(), 2u);
}

TEST(DeadCode, AnIfDropsTheResultsItsCallerIgnoresAndTheInputsNoBranchReads) {
  auto tm = make_control_module();
  ir::Module& m = tm->module;
  ir::Function& main = m.functions[0];
  // The If hands `a` in twice and returns a second value nobody reads.
  main.nodes[0].inputs.push_back(main.params[1]);
  main.nodes[0].outputs.push_back(main.add_value(main.values[size_t(main.nodes[0].outputs[0])].type, "ignored"));
  for (size_t b : {1, 2}) {
    ir::Function& f = m.functions[b];
    f.params.push_back(f.add_value(f.values[size_t(f.params[0])].type, "unread"));
    const int32_t e = f.add_value(f.values[size_t(f.params[0])].type, "e");
    f.nodes.push_back(op_node(OpId::Exp, {f.params[0]}, {e}));
    f.results.push_back(e);
  }
  run_pass(passes::eliminate_dead_code, m);
  const ir::Node& node = m.functions[0].nodes[0];
  ASSERT_EQ(node.kind, ir::NodeKind::kIf);
  EXPECT_EQ(node.inputs.size(), 2u);
  EXPECT_EQ(node.outputs.size(), 1u);
  for (int32_t b : node.functions) {
    EXPECT_EQ(m.functions[size_t(b)].params.size(), 1u);
    EXPECT_EQ(m.functions[size_t(b)].results.size(), 1u);
    EXPECT_EQ(m.functions[size_t(b)].nodes.size(), 1u);  // the exp went with its result
  }
  EXPECT_EQ(ir::verify(m), "");
}

TEST(CommonSubexpressions, MergesEqualNodesAndConstants) {
  auto tm = make_single({{"x", t(DType::kF32, {3})}});
  ir::Module& m = tm->module;
  ir::Function& f = m.functions[0];
  const int32_t x = f.params[0];
  const int32_t two_a = add_constant_value(m, f, make_constant<float>(DType::kF32, {}, {2}), "two");
  const int32_t two_b = add_constant_value(m, f, make_constant<float>(DType::kF32, {}, {2}), "two");
  const int32_t a = f.add_value(t(DType::kF32, {3}), "a");
  const int32_t b = f.add_value(t(DType::kF32, {3}), "b");
  const int32_t s1 = f.add_value(t(DType::kF32, {}), "s1");
  const int32_t s2 = f.add_value(t(DType::kF32, {}), "s2");
  const int32_t y = f.add_value(t(DType::kF32, {3}), "y");
  f.nodes.push_back(op_node(OpId::Mul, {x, two_a}, {a}));
  f.nodes.push_back(op_node(OpId::Mul, {x, two_b}, {b}));
  // Same op and input, different attributes: not merged.
  f.nodes.push_back(op_node(OpId::Sum, {a}, {s1}, {}, attrs_of({ops::AttrValue::Ints({0}), ops::AttrValue::Int(0)})));
  f.nodes.push_back(op_node(OpId::Max, {b}, {s2}, {}, attrs_of({ops::AttrValue::Ints({0}), ops::AttrValue::Int(0)})));
  f.nodes.push_back(op_node(OpId::Sub, {a, b}, {y}));
  // Two equal prints both stay.
  f.nodes.push_back(op_node(OpId::Print, {s1}, {}, {}, attrs_of({ops::AttrValue::String("{}")})));
  f.nodes.push_back(op_node(OpId::Print, {s1}, {}, {}, attrs_of({ops::AttrValue::String("{}")})));
  set_results(m, {y, s2});
  run_pass(passes::eliminate_common_subexpressions, m);
  EXPECT_EQ(run_pass(passes::eliminate_dead_code, m),
            "func f(%x: f32[3]) -> (%y: f32[3], %s2: f32[]) {\n"
            "  %two = const f32[] #0 = 2\n"
            "  %a: f32[3] = mul(%x, %two)\n"
            "  %s1: f32[] = sum(%a) {axes=[0], keepdims=0}\n"
            "  %s2: f32[] = max(%a) {axes=[0], keepdims=0}\n"
            "  %y: f32[3] = sub(%a, %a)\n"
            "  print(%s1) {format=\"{}\"}\n"
            "  print(%s1) {format=\"{}\"}\n"
            "  return %y, %s2\n"
            "}\n"
            "\n"
            "entry f = @f (x) -> (output_0, output_1)\n");
}

}  // namespace
}  // namespace sg::compiler
