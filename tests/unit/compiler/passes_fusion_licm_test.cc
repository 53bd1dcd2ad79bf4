// Fusion (fully_connected, conv2d_bias) and loop-invariant code motion.
#include <gtest/gtest.h>

#include "compiler/passes_test_util.h"

namespace sg::compiler {
namespace {

using namespace testing;
using ops::OpId;

TEST(Fusion, MatmulBiasReluBecomesFullyConnected) {
  auto tm = make_mlp_module();  // relu(matmul(x, w) + b), then a sum
  ir::Module& m = tm->module;
  run_pass(passes::fuse_operations, m);
  EXPECT_EQ(run_pass(passes::eliminate_dead_code, m),
            "symbols N\n"
            "\n"
            "func mlp(%x: f32[N, 4], %w: f32[4, 3]) -> (%4: f32[N, 1]) {\n"
            "  %b = const f32[3] #0 = [0.5, -1, 2]\n"
            "  %h: f32[N, 3] = fully_connected(%x, %w, %b) {activation=1}  # models/mlp.py:4:9\n"
            "  %4: f32[N, 1] = sum(%h) {axes=[1], keepdims=1}  # models/mlp.py:5:12\n"
            "  return %4\n"
            "}\n"
            "\n"
            "entry mlp = @mlp (x, w) -> (output_0)\n");
}

TEST(Fusion, BiasFirstNoActivationAndUnfusableChains) {
  auto tm = make_single({{"x", t(DType::kF32, {2, 4})}, {"w", t(DType::kF32, {4, 3})}, {"b", t(DType::kF32, {3})},
                         {"c", t(DType::kF32, {2, 3})}});
  ir::Module& m = tm->module;
  ir::Function& f = m.functions[0];
  const auto [x, w, b, c] = std::tuple(f.params[0], f.params[1], f.params[2], f.params[3]);
  auto value = [&] { return f.add_value(t(DType::kF32, {2, 3})); };
  const int32_t m1 = value(), y1 = value(), m2 = value(), y2 = value(), m3 = value(), y3 = value(), r3 = value();
  f.nodes.push_back(op_node(OpId::MatMul, {x, w}, {m1}));
  f.nodes.push_back(op_node(OpId::Add, {b, m1}, {y1}));  // bias first: fuses, no relu
  f.nodes.push_back(op_node(OpId::MatMul, {x, w}, {m2}));
  f.nodes.push_back(op_node(OpId::Add, {m2, c}, {y2}));  // a [2, 3] addend is no bias
  f.nodes.push_back(op_node(OpId::MatMul, {x, w}, {m3}));
  f.nodes.push_back(op_node(OpId::Add, {m3, b}, {y3}));
  f.nodes.push_back(op_node(OpId::Relu, {y3}, {r3}));
  set_results(m, {y1, y2, r3, y3});  // y3 is also a result: the relu stays apart
  EXPECT_EQ(run_pass(passes::fuse_operations, m),
            "func f(%x: f32[2, 4], %w: f32[4, 3], %b: f32[3], %c: f32[2, 3]) -> (%5: f32[2, 3], %7: f32[2, 3], "
            "%10: f32[2, 3], %9: f32[2, 3]) {\n"
            "  %5: f32[2, 3] = fully_connected(%x, %w, %b) {activation=0}\n"
            "  %6: f32[2, 3] = matmul(%x, %w)\n"
            "  %7: f32[2, 3] = add(%6, %c)\n"
            "  %9: f32[2, 3] = fully_connected(%x, %w, %b) {activation=0}\n"
            "  %10: f32[2, 3] = relu(%9)\n"
            "  return %5, %7, %10, %9\n"
            "}\n"
            "\n"
            "entry f = @f (x, w, b, c) -> (output_0, output_1, output_2, output_3)\n");
}

// tanh fuses into fully_connected (an RNN cell), not into conv2d_bias.
TEST(Fusion, TanhFusesAfterAMatmulOnly) {
  auto tm = make_single({{"x", t(DType::kF32, {1, 5, 5, 2})}, {"k", t(DType::kF32, {1, 1, 2, 3})},
                         {"w", t(DType::kF32, {2, 3})}, {"b", t(DType::kF32, {3})}});
  ir::Module& m = tm->module;
  ir::Function& f = m.functions[0];
  const auto [x, k, w, b] = std::tuple(f.params[0], f.params[1], f.params[2], f.params[3]);
  const ir::Type image = t(DType::kF32, {1, 5, 5, 3});
  const int32_t mm = f.add_value(image), s1 = f.add_value(image), y1 = f.add_value(image, "y1");
  const int32_t cv = f.add_value(image), s2 = f.add_value(image), y2 = f.add_value(image, "y2");
  const ops::Attrs conv = attrs_of({ops::AttrValue::Ints({1, 1}), ops::AttrValue::Ints({1, 1}),
                                    ops::AttrValue::String("VALID"), ops::AttrValue::Int(1)});
  f.nodes.push_back(op_node(OpId::MatMul, {x, w}, {mm}));
  f.nodes.push_back(op_node(OpId::Add, {mm, b}, {s1}));
  f.nodes.push_back(op_node(OpId::Tanh, {s1}, {y1}));
  f.nodes.push_back(op_node(OpId::Conv2D, {x, k}, {cv}, {}, conv));
  f.nodes.push_back(op_node(OpId::Add, {cv, b}, {s2}));
  f.nodes.push_back(op_node(OpId::Tanh, {s2}, {y2}));
  set_results(m, {y1, y2});
  EXPECT_EQ(run_pass(passes::fuse_operations, m),
            "func f(%x: f32[1, 5, 5, 2], %k: f32[1, 1, 2, 3], %w: f32[2, 3], %b: f32[3]) -> (%y1: f32[1, 5, 5, 3], "
            "%y2: f32[1, 5, 5, 3]) {\n"
            "  %y1: f32[1, 5, 5, 3] = fully_connected(%x, %w, %b) {activation=2}\n"
            "  %8: f32[1, 5, 5, 3] = conv2d_bias(%x, %k, %b) {stride=[1, 1], dilation=[1, 1], padding=\"VALID\", "
            "groups=1, activation=0}\n"
            "  %y2: f32[1, 5, 5, 3] = tanh(%8)\n"
            "  return %y1, %y2\n"
            "}\n"
            "\n"
            "entry f = @f (x, k, w, b) -> (output_0, output_1)\n");
}

TEST(Fusion, ConvBiasReluBecomesConv2dBias) {
  auto tm = make_single({{"x", t(DType::kF32, {1, 5, 5, 2})}, {"k", t(DType::kF32, {3, 3, 2, 4})}});
  ir::Module& m = tm->module;
  ir::Function& f = m.functions[0];
  const int32_t b = add_constant_value(m, f, make_constant<float>(DType::kF32, {4}, {1, 2, 3, 4}), "b");
  const int32_t cv = f.add_value(t(DType::kF32, {1, 5, 5, 4}));
  const int32_t s = f.add_value(t(DType::kF32, {1, 5, 5, 4}));
  const int32_t y = f.add_value(t(DType::kF32, {1, 5, 5, 4}), "y");
  const ops::Attrs conv = attrs_of({ops::AttrValue::Ints({1, 1}), ops::AttrValue::Ints({1, 1}),
                                    ops::AttrValue::String("SAME"), ops::AttrValue::Int(1)});
  f.nodes.push_back(op_node(OpId::Conv2D, {f.params[0], f.params[1]}, {cv}, {}, conv));
  f.nodes.push_back(op_node(OpId::Add, {cv, b}, {s}));
  f.nodes.push_back(op_node(OpId::Relu, {s}, {y}));
  set_results(m, {y});
  run_pass(passes::fuse_operations, m);
  EXPECT_EQ(run_pass(passes::eliminate_dead_code, m),
            "func f(%x: f32[1, 5, 5, 2], %k: f32[3, 3, 2, 4]) -> (%y: f32[1, 5, 5, 4]) {\n"
            "  %b = const f32[4] #0 = [1, 2, 3, 4]\n"
            "  %y: f32[1, 5, 5, 4] = conv2d_bias(%x, %k, %b) {stride=[1, 1], dilation=[1, 1], padding=\"SAME\", "
            "groups=1, activation=1}\n"
            "  return %y\n"
            "}\n"
            "\n"
            "entry f = @f (x, k) -> (output_0)\n");
}

// func f(%w: f32[3], %n: i64[]) -> f32[3]:
//   while i < n: acc = acc + exp(w) * 2     (w and n carried unchanged)
std::unique_ptr<TestModule> make_loop_module() {
  auto tm = make_single({{"w", t(DType::kF32, {3})}, {"n", t(DType::kI64, {})}});
  ir::Module& m = tm->module;
  m.functions.resize(3);
  ir::Function& f = m.functions[0];
  const int32_t i0 = add_constant_value(m, f, make_constant<int64_t>(DType::kI64, {}, {0}), "i");
  const int32_t acc0 = add_constant_value(m, f, make_constant<float>(DType::kF32, {3}, {0, 0, 0}), "acc");
  std::vector<int32_t> outs;
  for (const auto& [name, type] : {std::pair{"i", t(DType::kI64, {})}, std::pair{"acc", t(DType::kF32, {3})},
                                   std::pair{"w", t(DType::kF32, {3})}, std::pair{"n", t(DType::kI64, {})}})
    outs.push_back(f.add_value(type, name));
  f.nodes.push_back(control_node(ir::NodeKind::kWhile, {i0, acc0, f.params[0], f.params[1]}, outs, {1, 2}));
  set_results(m, {outs[1]});

  for (int g = 1; g <= 2; ++g) {
    ir::Function& fn = m.functions[size_t(g)];
    fn.name = g == 1 ? "cond" : "body";
    for (const auto& [name, type] : {std::pair{"i", t(DType::kI64, {})}, std::pair{"acc", t(DType::kF32, {3})},
                                     std::pair{"w", t(DType::kF32, {3})}, std::pair{"n", t(DType::kI64, {})}})
      fn.params.push_back(fn.add_value(type, name));
  }
  ir::Function& cond = m.functions[1];
  const int32_t test = cond.add_value(t(DType::kBool, {}));
  cond.nodes.push_back(op_node(OpId::Less, {cond.params[0], cond.params[3]}, {test}));
  cond.results = {test};
  ir::Function& body = m.functions[2];
  const int32_t one = add_constant_value(m, body, make_constant<int64_t>(DType::kI64, {}, {1}), "");
  const int32_t two = add_constant_value(m, body, make_constant<float>(DType::kF32, {}, {2}), "two");
  const int32_t i1 = body.add_value(t(DType::kI64, {}), "i");
  const int32_t e = body.add_value(t(DType::kF32, {3}), "e");
  const int32_t e2 = body.add_value(t(DType::kF32, {3}), "e2");
  const int32_t acc1 = body.add_value(t(DType::kF32, {3}), "acc");
  body.nodes.push_back(op_node(OpId::Add, {body.params[0], one}, {i1}));
  body.nodes.push_back(op_node(OpId::Exp, {body.params[2]}, {e}));
  body.nodes.push_back(op_node(OpId::Mul, {e, two}, {e2}));
  body.nodes.push_back(op_node(OpId::Add, {body.params[1], e2}, {acc1}));
  body.results = {i1, acc1, body.params[2], body.params[3]};
  return tm;
}

TEST(LoopInvariants, HoistsAChainOutOfTheBody) {
  auto tm = make_loop_module();
  ir::Module& m = tm->module;
  run_pass(passes::hoist_loop_invariants, m);
  EXPECT_EQ(run_pass(passes::eliminate_dead_code, m),
            "func f(%w.0: f32[3], %n.1: i64[]) -> (%acc.5: f32[3]) {\n"
            "  %i.2 = const i64[] #0 = 0\n"
            "  %acc.3 = const f32[3] #1 = [0, 0, 0]\n"
            "  %two = const f32[] #3 = 2\n"
            "  %e: f32[3] = exp(%w.0)\n"
            "  %e2.10: f32[3] = mul(%e, %two)\n"
            "  %i.4: i64[], %acc.5: f32[3], %w.6: f32[3], %n.7: i64[], %e2.11: f32[3] = while @cond do @body "
            "(%i.2, %acc.3, %w.0, %n.1, %e2.10)\n"
            "  return %acc.5\n"
            "}\n"
            "\n"
            "func cond(%i: i64[], %acc: f32[3], %w: f32[3], %n: i64[], %e2: f32[3]) -> (%4: bool[]) {\n"
            "  %4: bool[] = less(%i, %n)\n"
            "  return %4\n"
            "}\n"
            "\n"
            "func body(%i.0: i64[], %acc.1: f32[3], %w: f32[3], %n: i64[], %e2: f32[3]) -> (%i.5: i64[], "
            "%acc.7: f32[3], %w: f32[3], %n: i64[], %e2: f32[3]) {\n"
            "  %4 = const i64[] #2 = 1\n"
            "  %i.5: i64[] = add(%i.0, %4)\n"
            "  %acc.7: f32[3] = add(%acc.1, %e2)\n"
            "  return %i.5, %acc.7, %w, %n, %e2\n"
            "}\n"
            "\n"
            "entry f = @f (w, n) -> (output_0)\n");
}

TEST(LoopInvariants, LeavesNodesThatDependOnTheLoopOrMayFail) {
  auto tm = make_loop_module();
  ir::Module& m = tm->module;
  // exp(acc) varies; an integer floordiv could fail when the loop never runs.
  ir::Function& body = m.functions[2];
  body.nodes[1].inputs[0] = body.params[1];
  const int32_t q = body.add_value(t(DType::kI64, {}), "q");
  body.nodes.push_back(op_node(OpId::FloorDiv, {body.params[3], body.params[3]}, {q}));
  body.results[3] = body.params[3];
  run_pass(passes::hoist_loop_invariants, m, false);
}


// Op ids in elementwise_chain's steps: add 0, sub 1, mul 2, tanh 25, relu 27.
static_assert(int(OpId::Add) == 0 && int(OpId::Sub) == 1 && int(OpId::Mul) == 2 && int(OpId::Tanh) == 25 &&
              int(OpId::Relu) == 27);

// A module with one function `f` whose parameters have the symbolic dim N.
std::unique_ptr<TestModule> make_with_n(ir::Dim& n) {
  auto tm = make_single({});
  n = ir::Dim::symbol(tm->module.symbols.intern("N"));
  return tm;
}

int32_t add_param(ir::Module& m, const std::string& name, ir::Type type) {
  ir::Function& f = m.functions[0];
  f.params.push_back(f.add_value(std::move(type), name));
  m.entries[0].input_names.push_back(name);
  return f.params.back();
}

TEST(ElementwiseChains, ATreeOfOneTypeBecomesOneNode) {
  ir::Dim n;
  auto tm = make_with_n(n);
  ir::Module& m = tm->module;
  ir::Function& f = m.functions[0];
  const int32_t x = add_param(m, "x", t(DType::kF32, {n, 64})), y = add_param(m, "y", t(DType::kF32, {n, 64}));
  const int32_t s = add_param(m, "s", t(DType::kF32, {}));
  auto value = [&] { return f.add_value(t(DType::kF32, {n, 64})); };
  // relu(tanh(x * s + y) - x * y): two products feed one tree.
  const int32_t xs = value(), sum = value(), th = value(), xy = value(), diff = value(), r = value();
  f.nodes.push_back(op_node(OpId::Mul, {x, s}, {xs}));
  f.nodes.push_back(op_node(OpId::Add, {xs, y}, {sum}));
  f.nodes.push_back(op_node(OpId::Tanh, {sum}, {th}));
  f.nodes.push_back(op_node(OpId::Mul, {x, y}, {xy}));
  f.nodes.push_back(op_node(OpId::Sub, {th, xy}, {diff}));
  f.nodes.push_back(op_node(OpId::Relu, {diff}, {r}));
  set_results(m, {r});
  run_pass(passes::fuse_elementwise_chains, m);
  EXPECT_EQ(run_pass(passes::eliminate_dead_code, m),
            "symbols N\n"
            "\n"
            "func f(%x: f32[N, 64], %y: f32[N, 64], %s: f32[]) -> (%3: f32[N, 64]) {\n"
            "  %3: f32[N, 64] = elementwise_chain(%x, %s, %y) {steps=[2, 0, 1, 0, 3, 2, 25, 4, -1, 2, 0, 2, 1, 5, 6, "
            "27, 7, -1]}\n"
            "  return %3\n"
            "}\n"
            "\n"
            "entry f = @f (x, y, s) -> (output_0)\n");
}

TEST(ElementwiseChains, StopAtOtherTypesAndSmallTensors) {
  ir::Dim n;
  auto tm = make_with_n(n);
  ir::Module& m = tm->module;
  ir::Function& f = m.functions[0];
  const int32_t x = add_param(m, "x", t(DType::kF32, {n, 64})), c = add_param(m, "c", t(DType::kF32, {n, 1}));
  const int32_t v = add_param(m, "v", t(DType::kF32, {16})), i = add_param(m, "i", t(DType::kI32, {n, 64}));
  const ir::Type big = t(DType::kF32, {n, 64});
  const int32_t bc = f.add_value(big, "bc"), bt = f.add_value(big, "bt");        // c broadcasts: [N, 1] is no scalar
  const int32_t v2 = f.add_value(t(DType::kF32, {16}), "v2"), vr = f.add_value(t(DType::kF32, {16}), "vr");
  const int32_t i2 = f.add_value(t(DType::kI32, {n, 64}), "i2"), ir_ = f.add_value(t(DType::kI32, {n, 64}), "ir");
  f.nodes.push_back(op_node(OpId::Add, {x, c}, {bc}));
  f.nodes.push_back(op_node(OpId::Tanh, {bc}, {bt}));
  f.nodes.push_back(op_node(OpId::Mul, {v, v}, {v2}));
  f.nodes.push_back(op_node(OpId::Relu, {v2}, {vr}));
  f.nodes.push_back(op_node(OpId::Mul, {i, i}, {i2}));
  f.nodes.push_back(op_node(OpId::Relu, {i2}, {ir_}));
  set_results(m, {bt, vr, ir_});
  run_pass(passes::fuse_elementwise_chains, m, false);
}

TEST(ElementwiseChains, AnOperandReadTwiceByOneStepJoinsOnce) {
  ir::Dim n;
  auto tm = make_with_n(n);
  ir::Module& m = tm->module;
  ir::Function& f = m.functions[0];
  const int32_t x = add_param(m, "x", t(DType::kF32, {n, 64}));
  const int32_t th = f.add_value(t(DType::kF32, {n, 64}), "th"), sq = f.add_value(t(DType::kF32, {n, 64}), "sq");
  f.nodes.push_back(op_node(OpId::Tanh, {x}, {th}));
  f.nodes.push_back(op_node(OpId::Mul, {th, th}, {sq}));
  set_results(m, {sq});
  run_pass(passes::fuse_elementwise_chains, m);
  EXPECT_EQ(run_pass(passes::eliminate_dead_code, m),
            "symbols N\n"
            "\n"
            "func f(%x: f32[N, 64]) -> (%sq: f32[N, 64]) {\n"
            "  %sq: f32[N, 64] = elementwise_chain(%x) {steps=[25, 0, -1, 2, 1, 1]}\n"
            "  return %sq\n"
            "}\n"
            "\n"
            "entry f = @f (x) -> (output_0)\n");
}

// Adam's update of one parameter: m1 = b1 m + c1 g, v1 = b2 v + c2 g g,
// p1 = p - s m1 / (sqrt(v1) + e). m1 and v1 are results too (the moments are
// variables): one chain with three outputs.
TEST(ElementwiseChains, ResultsReadOutsideBecomeOutputs) {
  ir::Dim n;
  auto tm = make_with_n(n);
  ir::Module& m = tm->module;
  ir::Function& f = m.functions[0];
  const ir::Type big = t(DType::kF32, {n, 64});
  const int32_t p = add_param(m, "p", big), g = add_param(m, "g", big), mo = add_param(m, "m", big),
                v = add_param(m, "v", big), c = add_param(m, "c", t(DType::kF32, {}));
  const auto value = [&](const char* name) { return f.add_value(big, name); };
  const int32_t bm = value("bm"), cg = value("cg"), m1 = value("m1"), bv = value("bv"), gg = value("gg"),
                cgg = value("cgg"), v1 = value("v1"), sm = value("sm"), rt = value("rt"), den = value("den"),
                q = value("q"), p1 = value("p1"), after = value("after");
  f.nodes.push_back(op_node(OpId::Mul, {c, mo}, {bm}));
  f.nodes.push_back(op_node(OpId::Mul, {c, g}, {cg}));
  f.nodes.push_back(op_node(OpId::Add, {bm, cg}, {m1}));
  f.nodes.push_back(op_node(OpId::Mul, {c, v}, {bv}));
  f.nodes.push_back(op_node(OpId::Mul, {g, g}, {gg}));
  f.nodes.push_back(op_node(OpId::Mul, {c, gg}, {cgg}));
  f.nodes.push_back(op_node(OpId::Add, {bv, cgg}, {v1}));
  f.nodes.push_back(op_node(OpId::Mul, {c, m1}, {sm}));
  f.nodes.push_back(op_node(OpId::Sqrt, {v1}, {rt}));
  f.nodes.push_back(op_node(OpId::Add, {rt, c}, {den}));
  f.nodes.push_back(op_node(OpId::Div, {sm, den}, {q}));
  f.nodes.push_back(op_node(OpId::Sub, {p, q}, {p1}));
  f.nodes.push_back(op_node(OpId::Tanh, {m1}, {after}));  // after the chain: reads m1 from its output
  set_results(m, {p1, m1, v1, after});
  run_pass(passes::fuse_elementwise_chains, m);
  // Steps: m1 = 2, the product s * m1 = 3, v1 = 7, p1 = 11.
  EXPECT_EQ(run_pass(passes::eliminate_dead_code, m),
            "symbols N\n"
            "\n"
            "func f(%p: f32[N, 64], %g: f32[N, 64], %m: f32[N, 64], %v: f32[N, 64], %c: f32[]) -> (%p1: f32[N, 64], "
            "%m1: f32[N, 64], %v1: f32[N, 64], %after: f32[N, 64]) {\n"
            "  %m1: f32[N, 64], %v1: f32[N, 64], %p1: f32[N, 64] = elementwise_chain(%c, %m, %g, %v, %p) "
            "{steps=[2, 0, 1, 2, 0, 2, 0, 5, 6, 2, 0, 7, 2, 0, 3, 2, 2, 2, 2, 0, 10, 0, 9, 11, 21, 12, -1, 0, 13, "
            "0, 3, 8, 14, 1, 4, 15], outputs=[2, 7, 11]}\n"
            "  %after: f32[N, 64] = tanh(%m1)\n"
            "  return %p1, %m1, %v1, %after\n"
            "}\n"
            "\n"
            "entry f = @f (p, g, m, v, c) -> (output_0, output_1, output_2, output_3)\n");
}

TEST(ElementwiseChains, AResultReadBeforeTheRootStaysOutside) {
  ir::Dim n;
  auto tm = make_with_n(n);
  ir::Module& m = tm->module;
  ir::Function& f = m.functions[0];
  const ir::Type big = t(DType::kF32, {n, 64});
  const int32_t x = add_param(m, "x", big), i = add_param(m, "i", t(DType::kI32, {n, 64}));
  const int32_t th = f.add_value(big, "th"), r = f.add_value(big, "r"), c = f.add_value(t(DType::kI32, {n, 64}), "c");
  const int32_t ci = f.add_value(t(DType::kI32, {n, 64}), "ci");
  // th feeds a node that is no step (a cast) before the relu: the relu cannot
  // take the tanh in, as the cast would then read a value made after it.
  f.nodes.push_back(op_node(OpId::Tanh, {x}, {th}));
  ops::Attrs to_i32;
  to_i32.values = {ops::AttrValue::Int(int64_t(DType::kI32))};
  f.nodes.push_back(op_node(OpId::Cast, {th}, {c}, {}, to_i32));
  f.nodes.push_back(op_node(OpId::Relu, {th}, {r}));
  f.nodes.push_back(op_node(OpId::Add, {c, i}, {ci}));
  set_results(m, {r, ci});
  run_pass(passes::fuse_elementwise_chains, m, false);
}

}  // namespace
}  // namespace sg::compiler
