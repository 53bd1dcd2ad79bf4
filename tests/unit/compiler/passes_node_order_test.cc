// Node ordering for a lower activation peak: the greedy schedule, its memory
// model, effects as barriers, and the pipeline levels that run it.
#include <gtest/gtest.h>

#include "compiler/passes_test_util.h"

namespace sg::compiler {
namespace {

using namespace testing;
using ops::OpId;

const ops::Attrs kSumAll = attrs_of({ops::AttrValue::Ints({0}), ops::AttrValue::Int(0)});

// Two independent branches over x: f32[1000], each a big intermediate reduced to
// a scalar, written so that both big intermediates are live at once:
//   a = exp(x); b = tanh(x); [print(x)]; sa = sum(a); sb = sum(b); r = sa + sb
std::unique_ptr<TestModule> make_two_branches(bool print_between) {
  auto tm = make_single({{"x", t(DType::kF32, {1000})}});
  ir::Module& m = tm->module;
  ir::Function& f = m.functions[0];
  const int32_t x = f.params[0];
  const int32_t a = f.add_value(t(DType::kF32, {1000}), "a"), b = f.add_value(t(DType::kF32, {1000}), "b");
  const int32_t sa = f.add_value(t(DType::kF32, {}), "sa"), sb = f.add_value(t(DType::kF32, {}), "sb");
  const int32_t r = f.add_value(t(DType::kF32, {}), "r");
  f.nodes.push_back(op_node(OpId::Exp, {x}, {a}));
  f.nodes.push_back(op_node(OpId::Tanh, {x}, {b}));
  if (print_between) f.nodes.push_back(op_node(OpId::Print, {x}, {}, {}, attrs_of({ops::AttrValue::String("{}")})));
  f.nodes.push_back(op_node(OpId::Sum, {a}, {sa}, {}, kSumAll));
  f.nodes.push_back(op_node(OpId::Sum, {b}, {sb}, {}, kSumAll));
  f.nodes.push_back(op_node(OpId::Add, {sa, sb}, {r}));
  set_results(m, {r});
  return tm;
}

TEST(NodeOrder, IndependentBranchesRunOneAfterTheOther) {
  auto tm = make_two_branches(false);
  ir::Module& m = tm->module;
  // Program order: a and b (4000 bytes each) are live together with sa.
  EXPECT_EQ(passes::peak_live_bytes(m.functions[0]), 8004);
  EXPECT_EQ(run_pass(passes::order_nodes_for_memory, m),
            "func f(%x: f32[1000]) -> (%r: f32[]) {\n"
            "  %a: f32[1000] = exp(%x)\n"
            "  %sa: f32[] = sum(%a) {axes=[0], keepdims=0}\n"
            "  %b: f32[1000] = tanh(%x)\n"
            "  %sb: f32[] = sum(%b) {axes=[0], keepdims=0}\n"
            "  %r: f32[] = add(%sa, %sb)\n"
            "  return %r\n"
            "}\n"
            "\n"
            "entry f = @f (x) -> (output_0)\n");
  // Only one big intermediate at a time: b, beside sa and sb.
  EXPECT_EQ(passes::peak_live_bytes(m.functions[0]), 4008);
}

TEST(NodeOrder, NoNodeCrossesAnEffect) {
  // The better order would move sum(a) before the print: not allowed.
  auto tm = make_two_branches(true);
  ir::Module& m = tm->module;
  const std::string before = ir::print(m);
  EXPECT_EQ(run_pass(passes::order_nodes_for_memory, m, false), before);
}

TEST(NodeOrder, ReordersBetweenEffects) {
  // print(x) first, then the two branches: the segment after it is reordered.
  auto tm = make_two_branches(false);
  ir::Function& f = tm->module.functions[0];
  f.nodes.insert(f.nodes.begin(),
                 op_node(OpId::Print, {f.params[0]}, {}, {}, attrs_of({ops::AttrValue::String("{}")})));
  const std::string text = run_pass(passes::order_nodes_for_memory, tm->module);
  EXPECT_NE(text.find("  print(%x) {format=\"{}\"}\n  %a: f32[1000] = exp(%x)\n  %sa: f32[] = sum(%a)"),
            std::string::npos)
      << text;
  EXPECT_EQ(passes::peak_live_bytes(f), 4008);
}

TEST(NodeOrder, AGoodOrderIsKept) {
  auto tm = make_mlp_module();  // a chain: nothing to gain
  const std::string before = ir::print(tm->module);
  EXPECT_EQ(run_pass(passes::order_nodes_for_memory, tm->module, false), before);
}

TEST(NodeOrder, OnlyOptimizingLevelsReorder) {
  for (int level : {0, 1, 2}) {
    auto tm = make_two_branches(false);
    const std::string before = ir::print(tm->module);
    passes::run_pipeline(tm->module, level);
    EXPECT_EQ(ir::verify(tm->module), "");
    const ir::Function& f = tm->module.functions[0];
    EXPECT_EQ(ir::print(tm->module) == before, level == 0) << "level " << level;
    EXPECT_EQ(passes::peak_live_bytes(f), level == 0 ? 8004 : 4008) << "level " << level;
  }
}

TEST(NodeOrder, SymbolicDimsCountAsOne) {
  ir::Module m;
  const ir::Dim n = ir::Dim::symbol(m.symbols.intern("N"));
  EXPECT_EQ(passes::value_bytes(t(DType::kF32, {n, 784})), 4 * 784);
  EXPECT_EQ(passes::value_bytes(t(DType::kI64, {3, 5})), 8 * 15);
  EXPECT_EQ(passes::value_bytes(t(DType::kBool, {})), 1);
}

}  // namespace
}  // namespace sg::compiler
