// Constant folding: results computed with the reference kernels, never growing
// the file, leaving kernel errors and effects to the run.
#include <gtest/gtest.h>

#include "compiler/passes_test_util.h"

namespace sg::compiler {
namespace {

using namespace testing;
using ops::OpId;

TEST(FoldConstants, FoldsAChainAndDropsTheInputs) {
  auto tm = make_single({{"x", t(DType::kF32, {3})}});
  ir::Module& m = tm->module;
  ir::Function& f = m.functions[0];
  const int32_t a = add_constant_value(m, f, make_constant<float>(DType::kF32, {3}, {1, 2, 3}), "a");
  const int32_t b = add_constant_value(m, f, make_constant<float>(DType::kF32, {3}, {10, 20, 30}), "b");
  const int32_t s = f.add_value(t(DType::kF32, {3}), "s");
  const int32_t n = f.add_value(t(DType::kF32, {3}), "n");
  const int32_t y = f.add_value(t(DType::kF32, {3}), "y");
  f.nodes.push_back(op_node(OpId::Add, {a, b}, {s}));
  f.nodes.push_back(op_node(OpId::Neg, {s}, {n}));
  f.nodes.push_back(op_node(OpId::Mul, {f.params[0], n}, {y}));
  set_results(m, {y});
  run_pass(passes::fold_constants, m);
  EXPECT_EQ(run_pass(passes::eliminate_dead_code, m),
            "func f(%x: f32[3]) -> (%y: f32[3]) {\n"
            "  %n = const f32[3] #0 = [-11, -22, -33]\n"
            "  %y: f32[3] = mul(%x, %n)\n"
            "  return %y\n"
            "}\n"
            "\n"
            "entry f = @f (x) -> (output_0)\n");
}

TEST(FoldConstants, LeavesABroadcastThatWouldGrowTheFile) {
  auto tm = make_single({{"x", t(DType::kF32, {64, 3})}});
  ir::Module& m = tm->module;
  ir::Function& f = m.functions[0];
  const int32_t a = add_constant_value(m, f, make_constant<float>(DType::kF32, {3}, {1, 2, 3}), "a");
  const int32_t wide = f.add_value(t(DType::kF32, {64, 3}), "wide");
  const int32_t y = f.add_value(t(DType::kF32, {64, 3}), "y");
  f.nodes.push_back(op_node(OpId::BroadcastTo, {a}, {wide}, {}, attrs_of({ops::AttrValue::Ints({64, 3})})));
  f.nodes.push_back(op_node(OpId::Add, {f.params[0], wide}, {y}));
  set_results(m, {y});
  const std::string before = ir::print(m);
  EXPECT_EQ(run_pass(passes::fold_constants, m, false), before);
}

// Sized before anything is allocated: a fill of 10^10 elements (40 GB), or one
// whose size overflows, stays a node and costs the compiler nothing.
TEST(FoldConstants, LeavesAHugeFillUnallocated) {
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{100000, 100000},
                                            std::vector<int64_t>{int64_t(1) << 40, int64_t(1) << 40}}) {
    auto tm = make_single({{"x", t(DType::kF32, {})}});
    ir::Module& m = tm->module;
    ir::Function& f = m.functions[0];
    const int32_t one = add_constant_value(m, f, make_constant<float>(DType::kF32, {}, {1}), "one");
    const int32_t big = f.add_value(t(DType::kF32, {shape[0], shape[1]}), "big");
    const int32_t y = f.add_value(t(DType::kF32, {}), "y");
    f.nodes.push_back(op_node(OpId::Full, {one}, {big}, {}, attrs_of({ops::AttrValue::Ints(shape)})));
    f.nodes.push_back(op_node(OpId::Sum, {big}, {y}, {}, attrs_of({ops::AttrValue::Ints({0, 1}), ops::AttrValue::Int(0)})));
    set_results(m, {y});
    const std::string before = ir::print(m);
    EXPECT_EQ(run_pass(passes::fold_constants, m, false), before);
  }
}

// A product of two 1024 x 1024 weights (2^30 multiply-adds) is left to the run;
// a small one folds.
TEST(FoldConstants, LeavesCostlyProductsToTheRun) {
  for (const int64_t n : {int64_t(1024), int64_t(8)}) {
    auto tm = make_single({{"x", t(DType::kF32, {n, n})}});
    ir::Module& m = tm->module;
    ir::Function& f = m.functions[0];
    const std::vector<float> ones(size_t(n * n), 1.0f);
    const int32_t a = add_constant_value(m, f, make_constant<float>(DType::kF32, {n, n}, ones), "a");
    const int32_t b = add_constant_value(m, f, make_constant<float>(DType::kF32, {n, n}, ones), "b");
    const int32_t p = f.add_value(t(DType::kF32, {n, n}), "p");
    const int32_t y = f.add_value(t(DType::kF32, {n, n}), "y");
    f.nodes.push_back(op_node(OpId::MatMul, {a, b}, {p}));
    f.nodes.push_back(op_node(OpId::Add, {f.params[0], p}, {y}));
    set_results(m, {y});
    EXPECT_EQ(passes::fold_constants(m), n == 8) << n;
  }
}

TEST(FoldConstants, FoldsATransposeOfAWeightUsedOnce) {
  // The result is the size of the weight it replaces: the file does not grow.
  auto tm = make_single({{"x", t(DType::kF32, {2, 3})}});
  ir::Module& m = tm->module;
  ir::Function& f = m.functions[0];
  const int32_t w = add_constant_value(m, f, make_constant<float>(DType::kF32, {3, 2}, {1, 2, 3, 4, 5, 6}), "w");
  const int32_t wt = f.add_value(t(DType::kF32, {2, 3}), "wt");
  const int32_t y = f.add_value(t(DType::kF32, {2, 3}), "y");
  f.nodes.push_back(op_node(OpId::Transpose, {w}, {wt}, {}, attrs_of({ops::AttrValue::Ints({1, 0})})));
  f.nodes.push_back(op_node(OpId::Add, {f.params[0], wt}, {y}));
  set_results(m, {y});
  run_pass(passes::fold_constants, m);
  EXPECT_EQ(run_pass(passes::eliminate_dead_code, m),
            "func f(%x: f32[2, 3]) -> (%y: f32[2, 3]) {\n"
            "  %wt = const f32[2, 3] #0\n"
            "  %y: f32[2, 3] = add(%x, %wt)\n"
            "  return %y\n"
            "}\n"
            "\n"
            "entry f = @f (x) -> (output_0)\n");
}

TEST(FoldConstants, LeavesATransposeOfAWeightUsedTwice) {
  auto tm = make_single({{"x", t(DType::kF32, {2, 3})}, {"z", t(DType::kF32, {3, 2})}});
  ir::Module& m = tm->module;
  ir::Function& f = m.functions[0];
  const int32_t w = add_constant_value(m, f, make_constant<float>(DType::kF32, {3, 2}, {1, 2, 3, 4, 5, 6}), "w");
  const int32_t wt = f.add_value(t(DType::kF32, {2, 3}), "wt");
  const int32_t y = f.add_value(t(DType::kF32, {2, 3}), "y");
  const int32_t z = f.add_value(t(DType::kF32, {3, 2}), "z2");
  f.nodes.push_back(op_node(OpId::Transpose, {w}, {wt}, {}, attrs_of({ops::AttrValue::Ints({1, 0})})));
  f.nodes.push_back(op_node(OpId::Add, {f.params[0], wt}, {y}));
  f.nodes.push_back(op_node(OpId::Add, {f.params[1], w}, {z}));
  set_results(m, {y, z});
  run_pass(passes::fold_constants, m, false);
}

TEST(FoldConstants, LeavesKernelErrorsAndEffectsToTheRun) {
  auto tm = make_single({});
  ir::Module& m = tm->module;
  ir::Function& f = m.functions[0];
  const int32_t a = add_constant_value(m, f, make_constant<int64_t>(DType::kI64, {}, {7}), "a");
  const int32_t z = add_constant_value(m, f, make_constant<int64_t>(DType::kI64, {}, {0}), "z");
  const int32_t q = f.add_value(t(DType::kI64, {}), "q");
  const int32_t ok = add_constant_value(m, f, make_constant<uint8_t>(DType::kBool, {}, {1}), "ok");
  f.nodes.push_back(op_node(OpId::FloorDiv, {a, z}, {q}));
  f.nodes.push_back(op_node(OpId::Assert, {ok}, {}, {}, attrs_of({ops::AttrValue::String("never")})));
  set_results(m, {q});
  run_pass(passes::fold_constants, m, false);
  EXPECT_EQ(m.functions[0].nodes.size(), 2u);
}

TEST(FoldConstants, UsesTheValuesOfScalarInputsForShapes) {
  // arange(0, 2, 1) has a value-dependent shape; its inputs are constants.
  auto tm = make_single({});
  ir::Module& m = tm->module;
  ir::Function& f = m.functions[0];
  const int32_t lo = add_constant_value(m, f, make_constant<int64_t>(DType::kI64, {}, {0}), "lo");
  const int32_t hi = add_constant_value(m, f, make_constant<int64_t>(DType::kI64, {}, {2}), "hi");
  const int32_t st = add_constant_value(m, f, make_constant<int64_t>(DType::kI64, {}, {1}), "st");
  const int32_t r = f.add_value(t(DType::kI64, {2}), "r");
  f.nodes.push_back(op_node(OpId::Arange, {lo, hi, st}, {r}));
  set_results(m, {r});
  run_pass(passes::fold_constants, m);
  EXPECT_EQ(run_pass(passes::eliminate_dead_code, m),
            "func f() -> (%r: i64[2]) {\n"
            "  %r = const i64[2] #0 = [0, 1]\n"
            "  return %r\n"
            "}\n"
            "\n"
            "entry f = @f () -> (output_0)\n");
}

}  // namespace
}  // namespace sg::compiler
