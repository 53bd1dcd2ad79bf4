// Algebraic simplification: identities bypassed only where the types agree.
#include <gtest/gtest.h>

#include "compiler/passes_test_util.h"

namespace sg::compiler {
namespace {

using namespace testing;
using ops::OpId;

std::string simplify_then_dce(ir::Module& m) {
  run_pass(passes::simplify_algebra, m);
  return run_pass(passes::eliminate_dead_code, m);
}

TEST(Simplify, RemovesArithmeticIdentities) {
  auto tm = make_single({{"x", t(DType::kF32, {2, 3})}});
  ir::Module& m = tm->module;
  ir::Function& f = m.functions[0];
  const int32_t one = add_constant_value(m, f, make_constant<float>(DType::kF32, {}, {1}), "one");
  const int32_t zeros = add_constant_value(m, f, make_constant<float>(DType::kF32, {3}, {0, 0, 0}), "zeros");
  // x + -0 is x for every x; x + +0 is not where x is -0.
  const int32_t neg_zeros =
      add_constant_value(m, f, make_constant<float>(DType::kF32, {3}, {-0.0f, -0.0f, -0.0f}), "neg_zeros");
  int32_t v = f.params[0];
  const std::pair<OpId, bool> steps[] = {{OpId::Mul, false}, {OpId::Mul, true}, {OpId::Add, false},
                                         {OpId::Add, true},  {OpId::Sub, false}, {OpId::Div, false}};
  for (auto [op, constant_first] : steps) {
    const int32_t k = (op == OpId::Mul || op == OpId::Div) ? one : op == OpId::Add ? neg_zeros : zeros;
    const int32_t out = f.add_value(t(DType::kF32, {2, 3}));
    f.nodes.push_back(op_node(op, constant_first ? std::vector<int32_t>{k, v} : std::vector<int32_t>{v, k}, {out}));
    v = out;
  }
  set_results(m, {v});
  EXPECT_EQ(simplify_then_dce(m),
            "func f(%x: f32[2, 3]) -> (%x: f32[2, 3]) {\n"
            "  return %x\n"
            "}\n"
            "\n"
            "entry f = @f (x) -> (output_0)\n");
}

TEST(Simplify, AVectorsMatmulLosesItsExpandAndSqueeze) {
  // The gradient rules' dz @ W^T for a vector dz: expand_dims, matmul, squeeze.
  auto tm = make_single({{"v", t(DType::kF32, {3})}, {"w", t(DType::kF32, {3, 4})}});
  ir::Module& m = tm->module;
  ir::Function& f = m.functions[0];
  const int32_t row = f.add_value(t(DType::kF32, {1, 3}), "row");
  const int32_t prod = f.add_value(t(DType::kF32, {1, 4}), "prod");
  const int32_t out = f.add_value(t(DType::kF32, {4}), "out");
  f.nodes.push_back(op_node(OpId::ExpandDims, {f.params[0]}, {row}, {}, attrs_of({ops::AttrValue::Ints({0})})));
  f.nodes.push_back(op_node(OpId::MatMul, {row, f.params[1]}, {prod}));
  f.nodes.push_back(op_node(OpId::Squeeze, {prod}, {out}, {}, attrs_of({ops::AttrValue::Ints({0})})));
  set_results(m, {out});
  EXPECT_EQ(simplify_then_dce(m),
            "func f(%v: f32[3], %w: f32[3, 4]) -> (%out: f32[4]) {\n"
            "  %out: f32[4] = matmul(%v, %w)\n"
            "  return %out\n"
            "}\n"
            "\n"
            "entry f = @f (v, w) -> (output_0)\n");
}

TEST(Simplify, KeepsIdentitiesThatChangeTheType) {
  // x: f32[] + zeros[3] broadcasts; i32 / 1 is f32; 0 - x is not x.
  auto tm = make_single({{"x", t(DType::kF32, {})}, {"i", t(DType::kI32, {3})}});
  ir::Module& m = tm->module;
  ir::Function& f = m.functions[0];
  const int32_t zeros = add_constant_value(m, f, make_constant<float>(DType::kF32, {3}, {0, 0, 0}), "zeros");
  const int32_t one = add_constant_value(m, f, make_constant<int32_t>(DType::kI32, {}, {1}), "one");
  const int32_t a = f.add_value(t(DType::kF32, {3}), "a");
  const int32_t b = f.add_value(t(DType::kF32, {3}), "b");
  const int32_t c = f.add_value(t(DType::kF32, {3}), "c");
  f.nodes.push_back(op_node(OpId::Add, {f.params[0], zeros}, {a}));
  f.nodes.push_back(op_node(OpId::Div, {f.params[1], one}, {b}));
  f.nodes.push_back(op_node(OpId::Sub, {zeros, a}, {c}));
  set_results(m, {a, b, c});
  run_pass(passes::simplify_algebra, m, false);
}

TEST(Simplify, KeepsFloatZerosThatChangeTheSignOfZero) {
  // NumPy: -0 + +0 and -0 - -0 are +0, so neither x + +0 nor x - -0 is x for a float
  // x (f32 or f16), nor x + a zero of mixed signs.
  auto tm = make_single({{"x", t(DType::kF32, {3})}, {"h", t(DType::kF16, {3})}, {"y", t(DType::kF32, {2})}});
  ir::Module& m = tm->module;
  ir::Function& f = m.functions[0];
  const int32_t zeros = add_constant_value(m, f, make_constant<float>(DType::kF32, {3}, {0, 0, 0}), "zeros");
  const int32_t neg_zeros =
      add_constant_value(m, f, make_constant<float>(DType::kF32, {3}, {-0.0f, -0.0f, -0.0f}), "neg_zeros");
  const int32_t mixed = add_constant_value(m, f, make_constant<float>(DType::kF32, {2}, {-0.0f, 0.0f}), "mixed");
  const int32_t h_zero = add_constant_value(m, f, make_constant<uint16_t>(DType::kF16, {}, {0x0000}), "h_zero");
  const int32_t h_neg = add_constant_value(m, f, make_constant<uint16_t>(DType::kF16, {}, {0x8000}), "h_neg");
  const int32_t a = f.add_value(t(DType::kF32, {3}), "a");
  const int32_t b = f.add_value(t(DType::kF32, {3}), "b");
  const int32_t c = f.add_value(t(DType::kF16, {3}), "c");
  const int32_t d = f.add_value(t(DType::kF16, {3}), "d");
  const int32_t e = f.add_value(t(DType::kF32, {2}), "e");
  f.nodes.push_back(op_node(OpId::Add, {f.params[0], zeros}, {a}));
  f.nodes.push_back(op_node(OpId::Sub, {f.params[0], neg_zeros}, {b}));
  f.nodes.push_back(op_node(OpId::Add, {h_zero, f.params[1]}, {c}));
  f.nodes.push_back(op_node(OpId::Sub, {f.params[1], h_neg}, {d}));
  f.nodes.push_back(op_node(OpId::Add, {f.params[2], mixed}, {e}));
  set_results(m, {a, b, c, d, e});
  run_pass(passes::simplify_algebra, m, false);
}

TEST(Simplify, RemovesShapeAndCastIdentitiesAndDoubleNegation) {
  auto tm = make_single({{"x", t(DType::kF32, {2, 3, 4})}});
  ir::Module& m = tm->module;
  ir::Function& f = m.functions[0];
  const int32_t x = f.params[0];
  auto value = [&](std::vector<Dim> shape) { return f.add_value(t(DType::kF32, std::move(shape))); };
  const int32_t r = value({2, 3, 4}), c = value({2, 3, 4}), n1 = value({2, 3, 4}), n2 = value({2, 3, 4});
  const int32_t t1 = value({4, 2, 3}), t2 = value({2, 3, 4}), t3 = value({3, 2, 4});
  const int32_t id = value({2, 3, 4});
  f.nodes.push_back(op_node(OpId::Reshape, {x}, {r}, {}, attrs_of({ops::AttrValue::Ints({2, 3, 4})})));
  f.nodes.push_back(op_node(OpId::Cast, {r}, {c}, {}, attrs_of({ops::AttrValue::Int(int64_t(DType::kF32))})));
  f.nodes.push_back(op_node(OpId::Neg, {c}, {n1}));
  f.nodes.push_back(op_node(OpId::Neg, {n1}, {n2}));
  f.nodes.push_back(op_node(OpId::Transpose, {n2}, {id}, {}, attrs_of({ops::AttrValue::Ints({0, 1, 2})})));
  // transpose(transpose(x, [2, 0, 1]), [1, 2, 0]) is x.
  f.nodes.push_back(op_node(OpId::Transpose, {id}, {t1}, {}, attrs_of({ops::AttrValue::Ints({2, 0, 1})})));
  f.nodes.push_back(op_node(OpId::Transpose, {t1}, {t2}, {}, attrs_of({ops::AttrValue::Ints({1, 2, 0})})));
  // transpose(transpose(x, [2, 0, 1]), [2, 1, 0]) is transpose(x, [1, 0, 2]).
  f.nodes.push_back(op_node(OpId::Transpose, {t1}, {t3}, {}, attrs_of({ops::AttrValue::Ints({2, 1, 0})})));
  set_results(m, {t2, t3});
  EXPECT_EQ(simplify_then_dce(m),
            "func f(%x: f32[2, 3, 4]) -> (%x: f32[2, 3, 4], %1: f32[3, 2, 4]) {\n"
            "  %1: f32[3, 2, 4] = transpose(%x) {perm=[1, 0, 2]}\n"
            "  return %x, %1\n"
            "}\n"
            "\n"
            "entry f = @f (x) -> (output_0, output_1)\n");
}

}  // namespace
}  // namespace sg::compiler
