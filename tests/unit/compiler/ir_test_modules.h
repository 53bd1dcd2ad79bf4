// Small IR modules built by hand for the IR and emitter tests: an MLP layer with a
// bias constant and a symbolic batch, an If with two branch functions, a Call, a
// While, and constants of several sizes (empty, scalar, odd byte counts, > 64 bytes).
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "frontend/diagnostics.h"
#include "ir/ir.h"

namespace sg::compiler::testing {

using ir::Dim;
using ir::Type;

inline Type t(DType dtype, std::vector<Dim> shape) { return Type{dtype, std::move(shape)}; }

inline SourceSpan span(uint32_t line, uint32_t col) { return SourceSpan{0, line, col, line, col + 1}; }

template <class T>
ir::Constant make_constant(DType dtype, std::vector<int64_t> shape, const std::vector<T>& values) {
  ir::Constant k;
  k.dtype = dtype;
  k.shape = std::move(shape);
  k.bytes.resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(k.bytes.data(), values.data(), k.bytes.size());
  return k;
}

inline int32_t add_constant_value(ir::Module& m, ir::Function& f, ir::Constant k, std::string name) {
  std::vector<Dim> shape(k.shape.begin(), k.shape.end());
  const int32_t v = f.add_value(t(k.dtype, shape), std::move(name));
  f.values[size_t(v)].constant = int32_t(m.constants.size());
  m.constants.push_back(std::move(k));
  return v;
}

inline ir::Node op_node(ops::OpId op, std::vector<int32_t> in, std::vector<int32_t> out, SourceSpan s = {},
                        ops::Attrs attrs = {}) {
  ir::Node n;
  n.kind = ir::NodeKind::kOp;
  n.op = op;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  n.attrs = std::move(attrs);
  n.span = s;
  return n;
}

inline ir::Node control_node(ir::NodeKind kind, std::vector<int32_t> in, std::vector<int32_t> out,
                             std::vector<int32_t> functions, SourceSpan s = {}) {
  ir::Node n;
  n.kind = kind;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  n.functions = std::move(functions);
  n.span = s;
  return n;
}

// Holds the sources the module's spans point into.
struct TestModule {
  SourceManager sources;
  ir::Module module;
};

// func mlp(%x: f32[N, 4], %w: f32[4, 3]) -> f32[N, 3]:
//   relu(matmul(x, w) + b) with b a const f32[3]; then sum over axis 1 with keepdims.
// Also an unused i64 scalar constant and a 200-byte constant, so the data segment
// holds several constants of odd sizes.
inline std::unique_ptr<TestModule> make_mlp_module() {
  auto tm = std::make_unique<TestModule>();
  tm->sources.add("models/mlp.py", "import stagegraph as sg\n");
  ir::Module& m = tm->module;
  m.sources = &tm->sources;
  const Dim n = Dim::symbol(m.symbols.intern("N"));
  m.functions.emplace_back();
  ir::Function& f = m.functions.back();
  f.name = "mlp";
  const int32_t x = f.add_value(t(DType::kF32, {n, 4}), "x", span(3, 9));
  const int32_t w = f.add_value(t(DType::kF32, {4, 3}), "w", span(3, 30));
  f.params = {x, w};
  const int32_t b = add_constant_value(m, f, make_constant<float>(DType::kF32, {3}, {0.5f, -1.0f, 2.0f}), "b");
  add_constant_value(m, f, make_constant<int64_t>(DType::kI64, {}, {7}), "");
  std::vector<float> big(50);
  for (size_t i = 0; i < big.size(); ++i) big[i] = float(i) * 0.25f;
  add_constant_value(m, f, make_constant<float>(DType::kF32, {5, 10}, big), "table");
  const int32_t mm = f.add_value(t(DType::kF32, {n, 3}));
  const int32_t sum = f.add_value(t(DType::kF32, {n, 3}));
  const int32_t h = f.add_value(t(DType::kF32, {n, 3}), "h");
  const int32_t r = f.add_value(t(DType::kF32, {n, 1}));
  f.nodes.push_back(op_node(ops::OpId::MatMul, {x, w}, {mm}, span(4, 9)));
  f.nodes.push_back(op_node(ops::OpId::Add, {mm, b}, {sum}, span(4, 16)));
  f.nodes.push_back(op_node(ops::OpId::Relu, {sum}, {h}, span(4, 5)));
  ops::Attrs reduce;
  reduce.values = {ops::AttrValue::Ints({1}), ops::AttrValue::Int(1)};
  f.nodes.push_back(op_node(ops::OpId::Sum, {h}, {r}, span(5, 12), reduce));
  f.results = {r};
  m.entries.push_back(ir::Entry{"mlp", 0, {"x", "w"}, {"output_0"}});
  return tm;
}

// func main(%c: bool, %a: f32[K], %k: i32[3]) -> (f32[K], f32[K*2], bool[3]):
//   if c then a + a else a - a          (functions 1 and 2)
//   call twice(a) -> f32[K*2]            (function 3: concatenate)
//   while cond(i) do body(i) over an i64 counter (functions 4 and 5)
// plus a bool[3] constant (3 bytes) and an empty f32[0] constant.
inline std::unique_ptr<TestModule> make_control_module() {
  auto tm = std::make_unique<TestModule>();
  tm->sources.add("control.py", "import stagegraph as sg\n");
  ir::Module& m = tm->module;
  m.sources = &tm->sources;
  const Dim k = Dim::symbol(m.symbols.intern("K"));
  m.functions.resize(6);

  ir::Function& main = m.functions[0];
  main.name = "main";
  const int32_t c = main.add_value(t(DType::kBool, {}), "c");
  const int32_t a = main.add_value(t(DType::kF32, {k}), "a");
  const int32_t mask = add_constant_value(m, main, make_constant<uint8_t>(DType::kBool, {3}, {1, 0, 1}), "mask");
  add_constant_value(m, main, make_constant<float>(DType::kF32, {0}, {}), "empty");
  const int32_t zero = add_constant_value(m, main, make_constant<int64_t>(DType::kI64, {}, {0}), "i");
  main.params = {c, a};
  const int32_t picked = main.add_value(t(DType::kF32, {k}), "picked");
  const int32_t doubled = main.add_value(t(DType::kF32, {k * Dim(2)}));
  const int32_t count = main.add_value(t(DType::kI64, {}), "i");
  main.nodes.push_back(control_node(ir::NodeKind::kIf, {c, a}, {picked}, {1, 2}, span(5, 5)));
  main.nodes.push_back(control_node(ir::NodeKind::kCall, {a}, {doubled}, {3}, span(8, 12)));
  main.nodes.push_back(control_node(ir::NodeKind::kWhile, {zero}, {count}, {4, 5}, span(9, 5)));
  main.results = {picked, doubled, mask};
  m.entries.push_back(ir::Entry{"main", 0, {"c", "a"}, {"picked", "doubled", "mask"}});

  for (int branch = 1; branch <= 2; ++branch) {
    ir::Function& f = m.functions[size_t(branch)];
    f.name = branch == 1 ? "then_1" : "else_2";
    const int32_t p = f.add_value(t(DType::kF32, {k}), "a");
    const int32_t out = f.add_value(t(DType::kF32, {k}));
    f.params = {p};
    f.nodes.push_back(op_node(branch == 1 ? ops::OpId::Add : ops::OpId::Sub, {p, p}, {out}, span(6, 9)));
    f.results = {out};
  }

  ir::Function& twice = m.functions[3];
  twice.name = "twice";
  const int32_t tp = twice.add_value(t(DType::kF32, {k}), "v");
  const int32_t tr = twice.add_value(t(DType::kF32, {k * Dim(2)}));
  twice.params = {tp};
  ops::Attrs axis;
  axis.values = {ops::AttrValue::Int(0)};
  twice.nodes.push_back(op_node(ops::OpId::Concatenate, {tp, tp}, {tr}, span(2, 12), axis));
  twice.results = {tr};

  ir::Function& cond = m.functions[4];
  cond.name = "cond_3";
  const int32_t ci = cond.add_value(t(DType::kI64, {}), "i");
  const int32_t limit = add_constant_value(m, cond, make_constant<int64_t>(DType::kI64, {}, {3}), "");
  const int32_t test = cond.add_value(t(DType::kBool, {}));
  cond.params = {ci};
  cond.nodes.push_back(op_node(ops::OpId::Less, {ci, limit}, {test}, span(9, 11)));
  cond.results = {test};

  ir::Function& body = m.functions[5];
  body.name = "body_4";
  const int32_t bi = body.add_value(t(DType::kI64, {}), "i");
  const int32_t one = add_constant_value(m, body, make_constant<int64_t>(DType::kI64, {}, {1}), "");
  const int32_t next = body.add_value(t(DType::kI64, {}), "i");
  body.params = {bi};
  body.nodes.push_back(op_node(ops::OpId::Add, {bi, one}, {next}, span(10, 9)));
  body.results = {next};
  return tm;
}

}  // namespace sg::compiler::testing
