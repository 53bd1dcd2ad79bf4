// If-conversion: an If whose branches only choose values becomes where nodes; an
// If with work in a branch, or choices of another type, stays.
#include <gtest/gtest.h>

#include "compiler/passes_test_util.h"

namespace sg::compiler {
namespace {

using namespace testing;
using ops::OpId;

// func f(%c: bool, %a: i64[], %b: i64[]) -> (i64[], i64[]):
//   (x, y) = if c then (b, a) else (a, 7)     -- then and else are functions 1 and 2
// with `work` adding a node (b + b) to the then branch.
std::unique_ptr<TestModule> choosing_module(bool work) {
  auto tm = make_single({{"c", t(DType::kBool, {})}, {"a", t(DType::kI64, {})}, {"b", t(DType::kI64, {})}});
  ir::Module& m = tm->module;
  m.functions.resize(3);
  for (int branch = 1; branch <= 2; ++branch) {
    ir::Function& g = m.functions[size_t(branch)];
    g.name = branch == 1 ? "then_1" : "else_2";
    const int32_t a = g.add_value(t(DType::kI64, {}), "a");
    const int32_t b = g.add_value(t(DType::kI64, {}), "b");
    g.params = {a, b};
    if (branch == 1) {
      int32_t first = b;
      if (work) {
        first = g.add_value(t(DType::kI64, {}));
        g.nodes.push_back(op_node(OpId::Add, {b, b}, {first}));
      }
      g.results = {first, a};
    } else {
      g.results = {a, add_constant_value(m, g, make_constant<int64_t>(DType::kI64, {}, {7}), "seven")};
    }
  }
  ir::Function& f = m.functions[0];
  const int32_t x = f.add_value(t(DType::kI64, {}), "x");
  const int32_t y = f.add_value(t(DType::kI64, {}), "y");
  f.nodes.push_back(control_node(ir::NodeKind::kIf, {f.params[0], f.params[1], f.params[2]}, {x, y}, {1, 2},
                                 span(3, 5)));
  set_results(m, {x, y});
  return tm;
}

TEST(SelectIf, AnIfThatOnlyChoosesBecomesWhereNodes) {
  auto tm = choosing_module(false);
  ir::Module& m = tm->module;
  run_pass(passes::select_trivial_ifs, m);
  EXPECT_EQ(run_pass(passes::eliminate_dead_code, m),
            "func f(%c: bool[], %a: i64[], %b: i64[]) -> (%x: i64[], %y: i64[]) {\n"
            "  %seven = const i64[] #0 = 7\n"
            "  %x: i64[] = where(%c, %b, %a)                   # t.py:3:5\n"
            "  %y: i64[] = where(%c, %a, %seven)               # t.py:3:5\n"
            "  return %x, %y\n"
            "}\n"
            "\n"
            "entry f = @f (c, a, b) -> (output_0, output_1)\n");
}

TEST(SelectIf, AnIfWithWorkInABranchStays) {
  auto tm = choosing_module(true);
  run_pass(passes::select_trivial_ifs, tm->module, false);
}

TEST(SelectIf, ChoicesOfAnotherOrASymbolicTypeStay) {
  // The If declares f32[N] where its branches return f32[2] and f32[N]: a where
  // would not have the declared type; and two values of type f32[N] need not
  // have one shape at run time (the empty stand-in for a return not yet taken).
  auto tm = make_single({{"c", t(DType::kBool, {})}, {"p", t(DType::kF32, {2})}});
  ir::Module& m = tm->module;
  const Dim n = Dim::symbol(m.symbols.intern("N"));
  m.functions[0].params.push_back(m.functions[0].add_value(t(DType::kF32, {n}), "q"));
  m.entries[0].input_names.push_back("q");
  m.functions.resize(3);
  for (int branch = 1; branch <= 2; ++branch) {
    ir::Function& g = m.functions[size_t(branch)];
    g.name = branch == 1 ? "then_1" : "else_2";
    g.params = {g.add_value(t(DType::kF32, {2}), "p"), g.add_value(t(DType::kF32, {n}), "q")};
    g.results = {g.params[branch == 1 ? 0 : 1]};
  }
  ir::Function& f = m.functions[0];
  const int32_t out = f.add_value(t(DType::kF32, {n}), "out");
  f.nodes.push_back(control_node(ir::NodeKind::kIf, {f.params[0], f.params[1], f.params[2]}, {out}, {1, 2}));
  set_results(m, {out});
  run_pass(passes::select_trivial_ifs, m, false);
  // The same If choosing between two f32[N] values.
  m.functions[1].results = {m.functions[1].params[1]};
  run_pass(passes::select_trivial_ifs, m, false);
}

}  // namespace
}  // namespace sg::compiler
