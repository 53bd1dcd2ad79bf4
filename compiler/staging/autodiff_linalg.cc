// Reverse-mode rules of the sg.linalg ops (autodiff_internal.h), written with the
// ops themselves so that they are differentiable again. A = in[0], X = the result:
//   inv:               gA = -X^T g X^T
//   solve (A X = B):   gB = solve(A^T, g), gA = -gB X^T
//   triangular_solve:  gB = triangular_solve(A^T, g, not lower), gA = -gB X^T on A's triangle
//   slogdet:           gA = g_logabsdet * inv(A)^T (the sign has none)
//   cholesky (L):      S = L^-T phi(L^T g) L^-1, phi the lower triangle with the diagonal
//                      halved; gA = (S + S^T) / 2, the symmetric gradient (as JAX's)
// qr and eigh have no rule: differentiating through them is a located error.
#include "staging/autodiff_internal.h"

namespace sg::compiler::staging::autodiff_detail {

// [n, n] f32 (n = like's last dim): 1 strictly below (lower) or above the diagonal,
// `diagonal` on it, 0 elsewhere.
Value Vjp::triangle_weights(const Value& like, double diagonal, bool lower) {
  const Value n = s_.shape_item(like, int64_t(rank(like) - 1), span_);
  const Value idx = call("arange", {n});
  const Value rows = expand(idx, {1});
  const Value strict = s_.cast(bin(lower ? OpId::Greater : OpId::Less, rows, idx), DType::kF32, span_);
  const Value diag = s_.cast(bin(OpId::Equal, rows, idx), DType::kF32, span_);
  return add(strict, mul(diag, Value(diagonal)));
}

Grads Vjp::linalg_rule(const ir::Node& node, const std::vector<Value>& in, const Value& out, const Value& g) {
  auto matmul = [&](const Value& a, const Value& b) { return s_.apply(OpId::MatMul, {}, {a, b}, span_); };
  auto tri_solve = [&](const Value& a, const Value& b, bool lower) {
    ops::Attrs at;
    at.values = {ops::AttrValue::Int(lower ? 1 : 0)};
    return s_.apply(OpId::TriangularSolve, std::move(at), {a, b}, span_);
  };
  switch (node.op) {
    case OpId::Inv: {
      const Value xt = swap_last(out);
      return {neg(matmul(matmul(xt, g), xt))};
    }
    case OpId::Solve: {
      const Value gb = s_.apply(OpId::Solve, {}, {swap_last(in[0]), g}, span_);
      return {neg(matmul(gb, swap_last(out))), gb};
    }
    case OpId::TriangularSolve: {
      const bool lower = node.attrs.i(ops::attr::kTriangularLower) != 0;
      const Value gb = tri_solve(swap_last(in[0]), g, !lower);
      return {mul(neg(matmul(gb, swap_last(out))), triangle_weights(in[0], 1.0, lower)), gb};
    }
    case OpId::Slogdet: {
      const std::optional<Value> glog = ct_of(node.outputs[1]);
      if (!glog) return Grads(1);
      const int64_t r = int64_t(rank(in[0]));
      const Value inv = s_.apply(OpId::Inv, {}, {in[0]}, span_);
      return {mul(expand(*glog, {r - 2, r - 1}), swap_last(inv))};
    }
    case OpId::Cholesky: {
      const Value lt = swap_last(out);
      const Value p = mul(matmul(lt, g), triangle_weights(out, 0.5, true));
      const Value y = tri_solve(lt, p, false);                         // L^-T phi
      const Value z = swap_last(tri_solve(lt, swap_last(y), false));  // L^-T phi L^-1
      return {mul(add(z, swap_last(z)), Value(0.5))};
    }
    case OpId::Qr:
      refuse("sg.linalg.qr: it has no gradient rule (qr and eigh are not differentiable in Stagegraph)");
    case OpId::Eigh:
      refuse("sg.linalg.eigh: it has no gradient rule (qr and eigh are not differentiable in Stagegraph)");
    default:
      return Grads(in.size());
  }
}

}  // namespace sg::compiler::staging::autodiff_detail
