#include "passes/pass_util.h"

#include <cmath>
#include <cstring>

namespace sg::compiler::passes {

std::vector<int32_t> count_uses(const ir::Function& f) {
  std::vector<int32_t> uses(f.values.size(), 0);
  for (const ir::Node& n : f.nodes)
    for (int32_t v : n.inputs) ++uses[size_t(v)];
  for (int32_t v : f.results) ++uses[size_t(v)];
  return uses;
}

void replace_uses(ir::Function& f, int32_t from, int32_t to) {
  for (ir::Node& n : f.nodes)
    for (int32_t& v : n.inputs)
      if (v == from) v = to;
  for (int32_t& v : f.results)
    if (v == from) v = to;
}

std::vector<bool> functions_with_effects(const ir::Module& m) {
  std::vector<bool> effects(m.functions.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t f = 0; f < m.functions.size(); ++f) {
      if (effects[f]) continue;
      for (const ir::Node& n : m.functions[f].nodes)
        if (node_has_effect(n, effects)) {
          effects[f] = true;
          changed = true;
          break;
        }
    }
  }
  return effects;
}

bool node_has_effect(const ir::Node& n, const std::vector<bool>& effects) {
  if (n.kind == ir::NodeKind::kOp) return ops::has_flag(n.op, ops::kSideEffect);
  for (int32_t g : n.functions)
    if (effects[size_t(g)]) return true;
  return false;
}

const ir::Constant* constant_of(const ir::Module& m, const ir::Function& f, int32_t v) {
  const int32_t k = f.values[size_t(v)].constant;
  return k >= 0 ? &m.constants[size_t(k)] : nullptr;
}

namespace {

std::optional<double> element(const ir::Constant& k, size_t i) {
  const uint8_t* p = k.bytes.data() + i * dtype_size(k.dtype);
  switch (k.dtype) {
    case DType::kF32: { float x; std::memcpy(&x, p, 4); return double(x); }
    case DType::kI32: { int32_t x; std::memcpy(&x, p, 4); return double(x); }
    case DType::kI64: { int64_t x; std::memcpy(&x, p, 8); return double(x); }
    case DType::kBool: return p[0] != 0 ? 1.0 : 0.0;
    case DType::kF16: {
      uint16_t x;
      std::memcpy(&x, p, 2);
      if (x == 0x3C00) return 1.0;
      if ((x & 0x7FFF) == 0) return (x & 0x8000) != 0 ? -0.0 : 0.0;
      return std::nullopt;  // only the values the simplifier asks about are decoded
    }
  }
  return std::nullopt;
}

}  // namespace

bool constant_is_splat(const ir::Constant& k, double x) {
  const size_t n = k.bytes.size() / dtype_size(k.dtype);
  if (n == 0) return false;
  for (size_t i = 0; i < n; ++i) {
    const std::optional<double> e = element(k, i);
    if (!e || *e != x) return false;
  }
  return true;
}

bool constant_is_zero_splat(const ir::Constant& k, bool negative) {
  if (!constant_is_splat(k, 0)) return false;
  if (!is_float(k.dtype)) return true;
  const size_t n = k.bytes.size() / dtype_size(k.dtype);
  for (size_t i = 0; i < n; ++i)
    if (std::signbit(*element(k, i)) != negative) return false;
  return true;
}

std::optional<std::vector<int64_t>> static_shape(const ir::Type& t) {
  std::vector<int64_t> s;
  for (const ir::Dim& d : t.shape) {
    const std::optional<int64_t> v = d.as_static();
    if (!v) return std::nullopt;
    s.push_back(*v);
  }
  return s;
}

bool hoistable_op(const ir::Function& f, const ir::Node& n) {
  using ops::OpId;
  if (n.kind != ir::NodeKind::kOp || n.outputs.empty()) return false;
  for (int32_t v : n.inputs)
    if (!static_shape(f.values[size_t(v)].type)) return false;
  for (int32_t v : n.outputs)
    if (!static_shape(f.values[size_t(v)].type)) return false;
  const DType t = n.inputs.empty() ? DType::kF32 : f.values[size_t(n.inputs[0])].type.dtype;
  switch (n.op) {
    case OpId::FloorDiv: case OpId::Mod: case OpId::Pow:
      return is_float(t);
    case OpId::Where: case OpId::Clip: case OpId::Cast: case OpId::MatMul: case OpId::Transpose:
    case OpId::ExpandDims: case OpId::Squeeze: case OpId::Softmax: case OpId::LogSoftmax:
    case OpId::Sum: case OpId::Mean: case OpId::FullyConnected:
      return true;
    default:
      return ops::has_flag(n.op, ops::kElementwiseUnary | ops::kElementwiseBinary);
  }
}

std::vector<int32_t> kept_ids(const std::vector<int32_t>& v, const std::vector<bool>& keep, size_t first) {
  std::vector<int32_t> out(v.begin(), v.begin() + std::ptrdiff_t(first));
  for (size_t j = 0; j < keep.size(); ++j)
    if (keep[j]) out.push_back(v[first + j]);
  return out;
}

void erase_nodes(ir::Function& f, const std::vector<bool>& erase) {
  size_t w = 0;
  for (size_t i = 0; i < f.nodes.size(); ++i) {
    if (erase[i]) continue;
    if (w != i) f.nodes[w] = std::move(f.nodes[i]);  // never self-move: it would empty the node
    ++w;
  }
  f.nodes.resize(w);
}

namespace {

// How many nodes and entries name each function, module-wide.
std::vector<int32_t> function_references(const ir::Module& m) {
  std::vector<int32_t> refs(m.functions.size(), 0);
  for (const ir::Function& f : m.functions)
    for (const ir::Node& n : f.nodes)
      for (int32_t g : n.functions) ++refs[size_t(g)];
  for (const ir::Entry& e : m.entries) ++refs[size_t(e.function)];
  return refs;
}

}  // namespace

bool rewrite_sole_user_whiles(ir::Module& m, const std::function<size_t(size_t fi, size_t w)>& rewrite) {
  bool changed = false;
  for (size_t fi = 0; fi < m.functions.size(); ++fi) {
    for (size_t w = 0; w < m.functions[fi].nodes.size(); ++w) {
      const ir::Node& n = m.functions[fi].nodes[w];
      if (n.kind != ir::NodeKind::kWhile || n.functions.size() != 2) continue;
      const std::vector<int32_t> refs = function_references(m);
      const int32_t cond = n.functions[0], body = n.functions[1];
      if (cond == body || size_t(cond) == fi || size_t(body) == fi || refs[size_t(cond)] != 1 ||
          refs[size_t(body)] != 1)
        continue;
      const size_t inserted = rewrite(fi, w);
      changed |= inserted > 0;
      w += inserted;  // past the inserted nodes, at the While
    }
  }
  return changed;
}

}  // namespace sg::compiler::passes
