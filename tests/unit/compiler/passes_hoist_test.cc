// Hoisting a counted loop's input projection out of its While
// (passes::hoist_row_projections): golden IR on hand-built loops, and which staged
// loops match.
#include <gtest/gtest.h>

#include "compiler/passes_test_util.h"
#include "compiler/staging_test_util.h"

namespace sg::compiler {
namespace {

using namespace testing;
using ops::OpId;

// What make_row_loop builds differently from the loop that matches.
enum class Variant {
  kCounted,          // for t in range(xs.shape[0]): h = h + (xs[t] @ W + b)
  kTake,             // take(xs, t) instead of xs[t]
  kBreakFlag,        // cond is t < n and not done (a break)
  kStartsAtOne,      // t starts at 1
  kOtherLimit,       // n is a parameter, not xs.shape[0]
  kIndexNotCounter,  // xs[t + 1 - 1] computed in the body: not the counter itself
  kXsInside,         // xs2 = xs * 2 inside the body, then xs2[t]
  kWeightVaries,     // W is carried and changed by the body
};

ops::Attrs row_attrs() {
  return attrs_of({ops::AttrValue::Ints({0, 0}), ops::AttrValue::Ints({0, 0}), ops::AttrValue::Ints({1, 1}),
                   ops::AttrValue::Ints({ops::attr::kIndex | ops::attr::kDynBegin, 0})});
}

// func f(%xs: f32[T, 2], %h0: f32[3], %m: i64[]) -> f32[3]:
//   n = shape_dim(xs, 0); t = 0; h = h0
//   while t < n: h = h + (xs[t] @ W + b); t = t + 1       (W f32[2, 3], b f32[3] constants)
// Carried: t, h, xs, n, W, done (W and done unchanged unless the variant says so).
std::unique_ptr<TestModule> make_row_loop(Variant v) {
  auto tm = make_single({{"xs", t(DType::kF32, {Dim::symbol(0), 2})}, {"h0", t(DType::kF32, {3})},
                         {"m", t(DType::kI64, {})}});
  ir::Module& m = tm->module;
  m.symbols.intern("T");
  m.functions.resize(3);
  ir::Function& f = m.functions[0];
  const int32_t xs = f.params[0];
  const int32_t n = f.add_value(t(DType::kI64, {}), "n");
  f.nodes.push_back(op_node(OpId::ShapeDim, {xs}, {n}, {}, attrs_of({ops::AttrValue::Int(0)})));
  const int32_t t0 = add_constant_value(m, f, make_constant<int64_t>(DType::kI64, {}, {v == Variant::kStartsAtOne}), "t");
  const int32_t w0 = add_constant_value(m, f, make_constant<float>(DType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6}), "W");
  const int32_t done0 = add_constant_value(m, f, make_constant<uint8_t>(DType::kBool, {}, {0}), "done");
  const std::vector<std::pair<std::string, Type>> carried = {
      {"t", t(DType::kI64, {})},  {"h", t(DType::kF32, {3})},   {"xs", t(DType::kF32, {Dim::symbol(0), 2})},
      {"n", t(DType::kI64, {})},  {"W", t(DType::kF32, {2, 3})}, {"done", t(DType::kBool, {})}};
  std::vector<int32_t> outs;
  for (const auto& [name, type] : carried) outs.push_back(f.add_value(type, name));
  const int32_t limit = v == Variant::kOtherLimit ? f.params[2] : n;
  f.nodes.push_back(control_node(ir::NodeKind::kWhile, {t0, f.params[1], xs, limit, w0, done0}, outs, {1, 2}));
  set_results(m, {outs[1]});

  for (int g = 1; g <= 2; ++g) {
    ir::Function& fn = m.functions[size_t(g)];
    fn.name = g == 1 ? "cond" : "body";
    for (const auto& [name, type] : carried) fn.params.push_back(fn.add_value(type, name));
  }
  ir::Function& cond = m.functions[1];
  const int32_t test = cond.add_value(t(DType::kBool, {}));
  cond.nodes.push_back(op_node(OpId::Less, {cond.params[0], cond.params[3]}, {test}));
  cond.results = {test};
  if (v == Variant::kBreakFlag) {
    const int32_t go = cond.add_value(t(DType::kBool, {})), both = cond.add_value(t(DType::kBool, {}));
    cond.nodes.push_back(op_node(OpId::LogicalNot, {cond.params[5]}, {go}));
    cond.nodes.push_back(op_node(OpId::LogicalAnd, {test, go}, {both}));
    cond.results = {both};
  }

  ir::Function& body = m.functions[2];
  const auto [tp, h, xsp, np, wp, done] =
      std::tuple(body.params[0], body.params[1], body.params[2], body.params[3], body.params[4], body.params[5]);
  const int32_t one = add_constant_value(m, body, make_constant<int64_t>(DType::kI64, {}, {1}), "");
  const int32_t b = add_constant_value(m, body, make_constant<float>(DType::kF32, {3}, {0.5f, -1, 2}), "b");
  const int32_t t1 = body.add_value(t(DType::kI64, {}), "t");
  body.nodes.push_back(op_node(OpId::Add, {tp, one}, {t1}));
  int32_t rows = xsp, index = tp, w = wp;
  if (v == Variant::kXsInside) {
    const int32_t two = add_constant_value(m, body, make_constant<float>(DType::kF32, {}, {2}), "");
    rows = body.add_value(t(DType::kF32, {Dim::symbol(0), 2}), "xs2");
    body.nodes.push_back(op_node(OpId::Mul, {xsp, two}, {rows}));
  }
  if (v == Variant::kIndexNotCounter) {
    index = body.add_value(t(DType::kI64, {}), "k");
    body.nodes.push_back(op_node(OpId::Sub, {t1, one}, {index}));
  }
  if (v == Variant::kWeightVaries) {
    w = body.add_value(t(DType::kF32, {2, 3}), "W2");
    body.nodes.push_back(op_node(OpId::Neg, {wp}, {w}));
  }
  const int32_t row = body.add_value(t(DType::kF32, {2}), "x");
  if (v == Variant::kTake)
    body.nodes.push_back(op_node(OpId::Take, {rows, index}, {row}, {}, attrs_of({ops::AttrValue::Int(0)})));
  else
    body.nodes.push_back(op_node(OpId::Slice, {rows, index}, {row}, {}, row_attrs()));
  const int32_t mm = body.add_value(t(DType::kF32, {3}), "xw");
  const int32_t sum = body.add_value(t(DType::kF32, {3}), "xwb");
  const int32_t h1 = body.add_value(t(DType::kF32, {3}), "h");
  body.nodes.push_back(op_node(OpId::MatMul, {row, w}, {mm}));
  body.nodes.push_back(op_node(OpId::Add, {b, mm}, {sum}));
  body.nodes.push_back(op_node(OpId::Add, {h, sum}, {h1}));
  body.results = {t1, h1, xsp, np, w, done};
  return tm;
}

TEST(RowProjection, HoistsTheProductAndItsBias) {
  auto tm = make_row_loop(Variant::kCounted);
  ir::Module& m = tm->module;
  run_pass(passes::hoist_row_projections, m);
  EXPECT_EQ(run_pass(passes::eliminate_dead_code, m),
            "symbols T\n"
            "\n"
            "func f(%xs.0: f32[T, 2], %h0: f32[3], %m: i64[]) -> (%h: f32[3]) {\n"
            "  %t.4 = const i64[] #0 = 0\n"
            "  %W.5 = const f32[2, 3] #1\n"
            "  %done.6 = const bool[] #2 = false\n"
            "  %b = const f32[3] #4 = [0.5, -1, 2]\n"
            "  %n.3: i64[] = shape_dim(%xs.0) {axis=0}\n"
            "  %xwb.13: f32[T, 3] = matmul(%xs.0, %W.5)\n"
            "  %xwb.15: f32[T, 3] = add(%b, %xwb.13)\n"
            "  %t.7: i64[], %h: f32[3], %xs.9: f32[T, 2], %n.10: i64[], %W.11: f32[2, 3], %done.12: bool[], "
            "%xwb.16: f32[T, 3] = while @cond do @body (%t.4, %h0, %xs.0, %n.3, %W.5, %done.6, %xwb.15)\n"
            "  return %h\n"
            "}\n"
            "\n"
            "func cond(%t: i64[], %h: f32[3], %xs: f32[T, 2], %n: i64[], %W: f32[2, 3], %done: bool[], %xwb: "
            "f32[T, 3]) -> (%6: bool[]) {\n"
            "  %6: bool[] = less(%t, %n)\n"
            "  return %6\n"
            "}\n"
            "\n"
            "func body(%t.0: i64[], %h.1: f32[3], %xs: f32[T, 2], %n: i64[], %W: f32[2, 3], %done: bool[], "
            "%xwb.10: f32[T, 3]) -> (%t.7: i64[], %h.9: f32[3], %xs: f32[T, 2], %n: i64[], %W: f32[2, 3], %done: "
            "bool[], %xwb.10: f32[T, 3]) {\n"
            "  %6 = const i64[] #3 = 1\n"
            "  %t.7: i64[] = add(%t.0, %6)\n"
            "  %xwb.8: f32[3] = slice(%xwb.10, %t.0) {begin=[0, 0], end=[0, 0], step=[1, 1], flags=[12, 0]}\n"
            "  %h.9: f32[3] = add(%h.1, %xwb.8)\n"
            "  return %t.7, %h.9, %xs, %n, %W, %done, %xwb.10\n"
            "}\n"
            "\n"
            "entry f = @f (xs, h0, m) -> (output_0)\n");
}

TEST(RowProjection, TakeOfTheCounterIsARowToo) {
  auto tm = make_row_loop(Variant::kTake);
  run_pass(passes::hoist_row_projections, tm->module);
  const ir::Function& body = tm->module.functions[2];
  ASSERT_EQ(body.nodes.size(), 4u);  // t + 1, the dead take, row(P, t), h + row
  EXPECT_EQ(body.nodes[2].op, OpId::Slice);
  EXPECT_EQ(body.nodes[2].inputs[0], body.params.back());
}

TEST(RowProjection, LeavesLoopsThatDoNotCountOverTheRows) {
  for (Variant v : {Variant::kBreakFlag, Variant::kStartsAtOne, Variant::kOtherLimit, Variant::kIndexNotCounter,
                    Variant::kXsInside, Variant::kWeightVaries}) {
    SCOPED_TRACE(int(v));
    auto tm = make_row_loop(v);
    const std::string before = ir::print(tm->module);
    EXPECT_EQ(run_pass(passes::hoist_row_projections, tm->module, false), before);
  }
}

// Stages `program`, runs -O1, then the pass; returns whether it changed the module,
// with the -O2 pipeline's result in `o2`.
bool hoists(const std::string& program, std::string* o2 = nullptr) {
  StageResult r = stage_source(program);
  EXPECT_TRUE(r.ir) << r.locations();
  if (!r.ir) return false;
  passes::run_pipeline(*r.ir, 1);
  const bool changed = passes::hoist_row_projections(*r.ir);
  EXPECT_EQ(ir::verify(*r.ir), "") << ir::print(*r.ir);
  if (o2) {
    StageResult full = stage_source(program);
    passes::run_pipeline(*full.ir, 2);
    EXPECT_EQ(ir::verify(*full.ir), "");
    *o2 = ir::print(*full.ir);
  }
  return changed;
}

constexpr const char* kHead =
    "import stagegraph as sg\n"
    "@sg.function\n"
    "def f(xs: sg.f32[\"T\", 4], w: sg.f32[4, 8], u: sg.f32[8, 8], b: sg.f32[8], m: sg.i64):\n"
    "    h = sg.zeros((8,))\n";

TEST(RowProjection, StagedCountedLoopsMatch) {
  std::string o2;
  EXPECT_TRUE(hoists(std::string(kHead) +
                         "    for t in range(xs.shape[0]):\n"
                         "        h = sg.tanh(xs[t] @ w + h @ u + b)\n"
                         "    return h\n",
                     &o2));
  // At -O2 P = xs @ w + b (the late bias comes along), and the body keeps one
  // matmul, fused with row(P, t) as its bias and with the tanh.
  EXPECT_NE(o2.find("%16: f32[T, 8] = fully_connected(%xs, %w, %b) {activation=0}"), std::string::npos) << o2;
  EXPECT_NE(o2.find("%h.9: f32[8] = fully_connected(%h.1, %u, %6) {activation=2}"), std::string::npos) << o2;
  EXPECT_NE(o2.find("%6: f32[8] = slice(%11, %t) {begin=[0, 0], end=[0, 0], step=[1, 1], flags=[12, 0]}"),
            std::string::npos) << o2;
  EXPECT_EQ(o2.find("add(%"), o2.rfind("add(%")) << "one add in all, the counter's\n" << o2;
  EXPECT_EQ(o2.find("matmul("), o2.rfind("matmul(")) << "one matmul in all, the hoisted one\n" << o2;
  // The sum before the late bias is read twice: b stays in the body.
  EXPECT_TRUE(hoists(std::string(kHead) +
                         "    for t in range(xs.shape[0]):\n"
                         "        s = xs[t] @ w + h\n"
                         "        h = sg.tanh(s + b) * s\n"
                         "    return h\n",
                     &o2));
  EXPECT_NE(o2.find("= matmul(%xs, %w)"), std::string::npos) << o2;
  EXPECT_NE(o2.find("= add(%s, %b)"), std::string::npos) << o2;
  EXPECT_TRUE(hoists(std::string(kHead) +
                     "    for x in xs:\n"
                     "        h = sg.tanh(x @ w + h @ u)\n"
                     "    return h\n"));
  EXPECT_TRUE(hoists(std::string(kHead) +
                     "    for t in range(len(xs)):\n"
                     "        h = sg.tanh(sg.take(xs, t) @ w + b + h)\n"
                     "    return h\n"));
}

TEST(RowProjection, StagedLoopsThatMayDoLessWorkDoNotMatch) {
  // A break: the loop may stop before the last row.
  EXPECT_FALSE(hoists(std::string(kHead) +
                      "    for t in range(xs.shape[0]):\n"
                      "        h = sg.tanh(xs[t] @ w + h @ u)\n"
                      "        if sg.sum(h) > 100.0:\n"
                      "            break\n"
                      "    return h\n"));
  // An early return.
  EXPECT_FALSE(hoists(std::string(kHead) +
                      "    for t in range(xs.shape[0]):\n"
                      "        h = sg.tanh(xs[t] @ w + h @ u)\n"
                      "        if sg.sum(h) > 100.0:\n"
                      "            return h\n"
                      "    return h\n"));
  // The rows come from a tensor computed inside the loop.
  EXPECT_FALSE(hoists(std::string(kHead) +
                      "    for t in range(xs.shape[0]):\n"
                      "        ys = xs * sg.sum(h)\n"
                      "        h = sg.tanh(ys[t] @ w + h @ u)\n"
                      "    return h\n"));
  // The index is not the counter.
  EXPECT_FALSE(hoists(std::string(kHead) +
                      "    for t in range(xs.shape[0]):\n"
                      "        h = sg.tanh(xs[xs.shape[0] - 1 - t] @ w + h @ u)\n"
                      "    return h\n"));
  // The trip count is not xs's first dim.
  EXPECT_FALSE(hoists(std::string(kHead) +
                      "    for t in range(m):\n"
                      "        h = sg.tanh(xs[t] @ w + h @ u)\n"
                      "    return h\n"));
  EXPECT_FALSE(hoists(std::string(kHead) +
                      "    for t in range(1, xs.shape[0]):\n"
                      "        h = sg.tanh(xs[t] @ w + h @ u)\n"
                      "    return h\n"));
}

}  // namespace
}  // namespace sg::compiler
