// Algebraic simplification: nodes that return one of their inputs unchanged are
// bypassed (their uses renamed to that input; dead code elimination removes them),
// a transpose of a transpose becomes one transpose, and a vector's matmul written
// with expand_dims and squeeze around it becomes the vector's matmul. Only where
// the node's result type equals the surviving input's: x + zeros[3] broadcasts a scalar x
// and int x / 1 is f32, so neither is x. A float zero counts only with the sign
// that keeps -0: x + -0 and x - +0 are x, x + +0 is not (NumPy: -0 + 0 is +0).
#include <optional>
#include <vector>

#include "passes/pass_util.h"
#include "passes/passes.h"

namespace sg::compiler::passes {
namespace {

using ops::OpId;

bool is_splat(const ir::Module& m, const ir::Function& f, int32_t v, double x) {
  const ir::Constant* k = constant_of(m, f, v);
  return k != nullptr && constant_is_splat(*k, x);
}

// A zero of the sign that leaves every x, -0 included, unchanged: -0 for +, +0 for -.
bool is_zero(const ir::Module& m, const ir::Function& f, int32_t v, bool negative) {
  const ir::Constant* k = constant_of(m, f, v);
  return k != nullptr && constant_is_zero_splat(*k, negative);
}

bool is_identity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != int64_t(i)) return false;
  return true;
}

// The input a node passes through unchanged, if any (before the type check).
std::optional<int32_t> pass_through(const ir::Module& m, const ir::Function& f, const ir::Node& n,
                                    const std::vector<const ir::Node*>& producer) {
  const std::vector<int32_t>& in = n.inputs;
  switch (n.op) {
    case OpId::Add:
      if (is_zero(m, f, in[1], true)) return in[0];
      if (is_zero(m, f, in[0], true)) return in[1];
      return std::nullopt;
    case OpId::Sub:
      if (is_zero(m, f, in[1], false)) return in[0];
      return std::nullopt;
    case OpId::Mul:
      if (is_splat(m, f, in[1], 1)) return in[0];
      if (is_splat(m, f, in[0], 1)) return in[1];
      return std::nullopt;
    case OpId::Div:
      if (is_splat(m, f, in[1], 1)) return in[0];
      return std::nullopt;
    case OpId::Reshape:
    case OpId::BroadcastTo:
    case OpId::Cast:
      return in[0];  // the type check decides: same shape, same dtype
    case OpId::Transpose:
      if (is_identity(n.attrs.ints(ops::attr::kPermAxes))) return in[0];
      return std::nullopt;
    case OpId::Neg: {
      const ir::Node* p = producer[size_t(in[0])];
      if (p != nullptr && p->kind == ir::NodeKind::kOp && p->op == OpId::Neg) return p->inputs[0];
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

// transpose(transpose(x, p), q) -> transpose(x, p[q]); true when rewritten.
bool merge_transposes(ir::Node& n, const std::vector<const ir::Node*>& producer) {
  if (n.op != OpId::Transpose) return false;
  const ir::Node* p = producer[size_t(n.inputs[0])];
  if (p == nullptr || p->kind != ir::NodeKind::kOp || p->op != OpId::Transpose) return false;
  const std::vector<int64_t>& inner = p->attrs.ints(ops::attr::kPermAxes);
  const std::vector<int64_t>& outer = n.attrs.ints(ops::attr::kPermAxes);
  if (inner.size() != outer.size()) return false;
  // out[i] = mid[outer[i]] = x[inner[outer[i]]]
  std::vector<int64_t> perm(outer.size());
  for (size_t i = 0; i < outer.size(); ++i) perm[i] = inner[size_t(outer[i])];
  n.inputs[0] = p->inputs[0];
  n.attrs.values[ops::attr::kPermAxes] = ops::AttrValue::Ints(std::move(perm));
  return true;
}

// squeeze(matmul(expand_dims(v, 0), w), 0) -> matmul(v, w) for a vector v and a
// matrix w (a vector's product as the gradient rules write it: two nodes fewer; the
// old matmul goes with dead code where nothing else reads it); true when rewritten.
bool vector_matmul(const ir::Function& f, ir::Node& n, const std::vector<const ir::Node*>& producer) {
  const auto is = [](const ir::Node* p, OpId op) { return p != nullptr && p->kind == ir::NodeKind::kOp && p->op == op; };
  if (n.op != OpId::Squeeze || n.attrs.ints(0) != std::vector<int64_t>{0}) return false;
  const ir::Node* mm = producer[size_t(n.inputs[0])];
  if (!is(mm, OpId::MatMul) || f.values[size_t(mm->inputs[1])].type.rank() != 2) return false;
  const ir::Node* e = producer[size_t(mm->inputs[0])];
  if (!is(e, OpId::ExpandDims) || e->attrs.ints(0) != std::vector<int64_t>{0} ||
      f.values[size_t(e->inputs[0])].type.rank() != 1)
    return false;
  n.op = OpId::MatMul;
  n.attrs = ops::Attrs{};
  n.inputs = {e->inputs[0], mm->inputs[1]};
  return true;
}

bool simplify_function(const ir::Module& m, ir::Function& f) {
  bool changed = false;
  std::vector<const ir::Node*> producer(f.values.size(), nullptr);
  for (ir::Node& n : f.nodes) {
    if (n.kind == ir::NodeKind::kOp && n.outputs.size() == 1) {
      // Merging first lets an identity result bypass the node below.
      changed |= merge_transposes(n, producer);
      changed |= vector_matmul(f, n, producer);
      const std::optional<int32_t> src = pass_through(m, f, n, producer);
      const int32_t out = n.outputs[0];
      if (src && f.values[size_t(*src)].type == f.values[size_t(out)].type) {
        replace_uses(f, out, *src);
        changed = true;
      }
    }
    for (int32_t v : n.outputs) producer[size_t(v)] = &n;
  }
  return changed;
}

}  // namespace

bool simplify_algebra(ir::Module& m) {
  bool changed = false;
  for (ir::Function& f : m.functions) changed |= simplify_function(m, f);
  return changed;
}

}  // namespace sg::compiler::passes
