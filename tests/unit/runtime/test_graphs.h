// The graphs the runtime tests share, written with graph_builder.h. Each comment
// gives the staged program the graph stands for.
#pragma once

#include "graph_builder.h"
#include "ops/op_table.h"

namespace sg::testing {

// def affine(x: f32["N", 3]): return x * 2.0 + c      (c = [1, 2, 3], a constant)
inline GraphSpec affine_graph() {
  GraphSpec g;
  g.symbols = {"N"};
  const int32_t two = g.add_constant<float>({2.0f});
  const int32_t c = g.add_constant<float>({1.0f, 2.0f, 3.0f});
  FunctionSpec f;
  f.name = "affine";
  const uint32_t x = f.param(DType::kF32, {sym(0), {3, -1}});
  const uint32_t k2 = f.value(DType::kF32, {}, two);
  const uint32_t kc = f.value(DType::kF32, shape({3}), c);
  const uint32_t t = f.op("mul", {x, k2}, DType::kF32, {sym(0), {3, -1}}, 2, 12);
  const uint32_t y = f.op("add", {t, kc}, DType::kF32, {sym(0), {3, -1}}, 2, 18);
  f.results = {y};
  g.add_entry("affine", g.add_function(std::move(f)), {"x"}, {"output_0"});
  return g;
}

// def pair(x: f32["N", 3], y: f32["N", 3], z: f32["M", 3]): return x + y + z
// (N and M are independent: a run with N != M fails in the second add at run time)
inline GraphSpec pair_graph() {
  GraphSpec g;
  g.symbols = {"N", "M"};
  FunctionSpec f;
  f.name = "pair";
  const uint32_t x = f.param(DType::kF32, {sym(0), {3, -1}});
  const uint32_t y = f.param(DType::kF32, {sym(0), {3, -1}});
  const uint32_t z = f.param(DType::kF32, {sym(1), {3, -1}});
  const uint32_t s = f.op("add", {x, y}, DType::kF32, {sym(0), {3, -1}}, 3, 12);
  const uint32_t r = f.op("add", {s, z}, DType::kF32, {sym(0), {3, -1}}, 3, 16);
  f.results = {r};
  g.add_entry("pair", g.add_function(std::move(f)), {"x", "y", "z"}, {"output_0"});
  return g;
}

// def total(n: i64):
//     i = 0; s = 0
//     while i < n: s = s + i; i = i + 1
//     return s
inline GraphSpec while_sum_graph() {
  GraphSpec g;
  const int32_t zero = g.add_constant<int64_t>({0});
  const int32_t one = g.add_constant<int64_t>({1});
  const auto i64 = std::pair<DType, ShapeSpec>{DType::kI64, {}};

  FunctionSpec cond;  // (i, s, n) -> i < n
  cond.name = "total_cond";
  {
    const uint32_t i = cond.param(DType::kI64, {}), s = cond.param(DType::kI64, {}), n = cond.param(DType::kI64, {});
    (void)s;
    cond.results = {cond.op("less", {i, n}, DType::kBool, {}, 3, 11)};
  }
  FunctionSpec body;  // (i, s, n) -> (i + 1, s + i, n)
  body.name = "total_body";
  {
    const uint32_t i = body.param(DType::kI64, {}), s = body.param(DType::kI64, {}), n = body.param(DType::kI64, {});
    const uint32_t k1 = body.value(DType::kI64, {}, one);
    const uint32_t s2 = body.op("add", {s, i}, DType::kI64, {}, 3, 25);
    const uint32_t i2 = body.op("add", {i, k1}, DType::kI64, {}, 3, 38);
    body.results = {i2, s2, n};
  }
  FunctionSpec main;
  main.name = "total";
  const uint32_t n = main.param(DType::kI64, {});
  const uint32_t k0 = main.value(DType::kI64, {}, zero);
  main.results = {main.control(fb::NodeKind::While, {1, 2}, {k0, k0, n}, {i64, i64, i64}, 3)[1]};
  g.add_function(std::move(main));
  g.add_function(std::move(cond));
  g.add_function(std::move(body));
  g.add_entry("total", 0, {"n"}, {"output_0"});
  return g;
}

// def rec(n: i64): return base if n <= limit else n OP rec(n - 1)
// OP "mul", limit 1, base 1: factorial; OP "add", limit 0, base 0: 0 + 1 + ... + n.
// Every call to rec, the first excepted (the entry), is a Call node.
inline GraphSpec recursive_graph(const std::string& combine, int64_t limit, int64_t base) {
  GraphSpec g;
  const int32_t k_limit = g.add_constant<int64_t>({limit});
  const int32_t k_base = g.add_constant<int64_t>({base});
  const int32_t k_one = g.add_constant<int64_t>({1});
  const auto i64 = std::pair<DType, ShapeSpec>{DType::kI64, {}};
  enum : uint32_t { kRec = 0, kBase = 1, kStep = 2 };

  FunctionSpec rec;
  rec.name = "rec";
  {
    const uint32_t n = rec.param(DType::kI64, {});
    const uint32_t lim = rec.value(DType::kI64, {}, k_limit);
    const uint32_t c = rec.op("less_equal", {n, lim}, DType::kBool, {}, 2, 20);
    rec.results = rec.control(fb::NodeKind::If, {kBase, kStep}, {c, n}, {i64}, 2);
  }
  FunctionSpec base_fn;
  base_fn.name = "rec_base";
  {
    base_fn.param(DType::kI64, {});
    base_fn.results = {base_fn.value(DType::kI64, {}, k_base)};
  }
  FunctionSpec step;
  step.name = "rec_step";
  {
    const uint32_t n = step.param(DType::kI64, {});
    const uint32_t one = step.value(DType::kI64, {}, k_one);
    const uint32_t m = step.op("sub", {n, one}, DType::kI64, {}, 2, 50);
    const uint32_t r = step.control(fb::NodeKind::Call, {kRec}, {m}, {i64}, 2)[0];
    step.results = {step.op(combine, {n, r}, DType::kI64, {}, 2, 46)};
  }
  g.add_function(std::move(rec));
  g.add_function(std::move(base_fn));
  g.add_function(std::move(step));
  g.add_entry("rec", kRec, {"n"}, {"output_0"});
  return g;
}

// The attributes of x[t] for a matrix x and a run-time index t (the slice's
// second input): an index on axis 0, axis 1 whole.
inline std::vector<std::pair<std::string, ops::AttrValue>> row_at_input_index() {
  return {{"begin", ops::AttrValue::Ints({0, 0})},
          {"end", ops::AttrValue::Ints({0, 0})},
          {"step", ops::AttrValue::Ints({1, 1})},
          {"flags", ops::AttrValue::Ints({ops::attr::kIndex | ops::attr::kDynBegin, 0})}};
}

// def row(x: f32[8, 16], t: i64): return neg(x[t])
// The index is a run-time value; the slice node reads it as a dynamic begin.
inline GraphSpec row_graph() {
  GraphSpec g;
  FunctionSpec f;
  f.name = "row";
  const uint32_t x = f.param(DType::kF32, shape({8, 16}));
  const uint32_t t = f.param(DType::kI64, {});
  const uint32_t r = f.op("slice", {x, t}, DType::kF32, shape({16}), 3, 9);
  f.nodes.back().attrs = row_at_input_index();
  f.results = {f.op("neg", {r}, DType::kF32, shape({16}))};
  g.add_entry("row", g.add_function(std::move(f)), {"x", "t"}, {"y"});
  return g;
}

// def pick(c: bool, x: f32["N"]) -> f32[4]: y = x if c else x; return neg(y)
// The If's result is declared f32[4] whatever N is: right only for N = 4.
inline GraphSpec pick_graph() {
  GraphSpec g;
  g.symbols = {"N"};
  const ShapeSpec n = {sym(0)};
  FunctionSpec f;
  f.name = "pick";
  {
    const uint32_t c = f.param(DType::kBool, {});
    const uint32_t x = f.param(DType::kF32, n);
    const uint32_t y = f.control(fb::NodeKind::If, {1, 1}, {c, x}, {{DType::kF32, shape({4})}}, 7)[0];
    f.results = {f.op("neg", {y}, DType::kF32, shape({4}), 8)};
  }
  FunctionSpec same;
  same.name = "pick_same";
  same.results = {same.param(DType::kF32, n)};
  g.add_function(std::move(f));
  g.add_function(std::move(same));
  g.add_entry("pick", 0, {"c", "x"}, {"y"});
  return g;
}

}  // namespace sg::testing
