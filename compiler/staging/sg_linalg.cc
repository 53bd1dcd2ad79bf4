// The linalg family of the op library: sg.matmul and sg.dot, and sg.linalg
// (docs/SPEC.md §7, "Linear algebra"): inv, solve, det, slogdet, cholesky,
// triangular_solve, qr, eigh and norm. The matrix ops stage one node each (kernels
// in kernels/reference/linalg.cc) after NumPy's argument rules: f32 operands (ints
// and bools are cast to f32; f16 is refused, as NumPy's linalg refuses it), batch
// dims broadcast against each other, a 1-d right-hand side a vector. det is
// slogdet's sign * exp(logabsdet); norm is a composite of reductions.
#include <cmath>
#include <string>

#include "staging/arg_binding.h"
#include "staging/sg_ops_internal.h"

namespace sg::compiler::staging {
namespace {

const char* const kFunctions[] = {"inv", "solve", "det", "slogdet", "cholesky", "triangular_solve",
                                  "qr", "eigh", "norm"};

std::string describe(Stager& s, const Value& x) { return s.module().format_type(s.tensor_type(x)); }

// An operand as f32: ints and bools cast (as NumPy's linalg computes them in float).
Value as_f32(Stager& s, const Value& v, const std::string& fn, SourceSpan span) {
  Value x = s.to_tensor(v, std::nullopt, span);
  const DType dt = s.tensor_dtype(x);
  if (dt == DType::kF16)
    s.fail(span, fn + ": f16 is not supported (NumPy's linalg has no f16 either); cast with astype(sg.f32)");
  return dt == DType::kF32 ? x : s.cast(x, DType::kF32, span);
}

// A stack of matrices [..., m, n]; square ones where `square`.
Value matrix(Stager& s, const Value& v, const std::string& fn, bool square, SourceSpan span) {
  Value x = as_f32(s, v, fn, span);
  const ir::Type t = s.tensor_type(x);
  if (t.rank() < 2)
    s.fail(span, fn + ": expects a matrix or a stack of matrices (rank 2 or more), got " + describe(s, x));
  if (square && ops::dim_equal(t.shape[t.rank() - 2], t.shape[t.rank() - 1]) == ops::Tri::kNo)
    s.fail(span, fn + ": expects square matrices (the last two dims equal), got " + describe(s, x));
  return x;
}

// The batch dims of a [A..., n, n] and b [B..., n, k] broadcast (NumPy's rule, dims
// taken from whichever operand gives them): both operands broadcast to them.
std::pair<Value, Value> broadcast_batch(Stager& s, const Value& a, const Value& b, const std::string& fn,
                                        SourceSpan span) {
  const ir::Type ta = s.tensor_type(a), tb = s.tensor_type(b);
  const size_t ba = ta.rank() - 2, bb = tb.rank() - 2, batch = std::max(ba, bb);
  std::vector<Value> dims;
  bool a_same = ba == batch, b_same = bb == batch;
  for (size_t i = 0; i < batch; ++i) {
    const bool in_a = i + ba >= batch, in_b = i + bb >= batch;
    const size_t ia = i + ba - batch, ib = i + bb - batch;
    if (!in_a || !in_b) {
      dims.push_back(in_a ? s.shape_item(a, int64_t(ia), span) : s.shape_item(b, int64_t(ib), span));
      continue;
    }
    const ops::SymDim& da = ta.shape[ia];
    const ops::SymDim& db = tb.shape[ib];
    if (ops::dim_equal(da, db) == ops::Tri::kYes || db.as_static() == std::optional<int64_t>(1)) {
      dims.push_back(s.shape_item(a, int64_t(ia), span));
      b_same = b_same && ops::dim_equal(da, db) == ops::Tri::kYes;
    } else if (da.as_static() == std::optional<int64_t>(1)) {
      dims.push_back(s.shape_item(b, int64_t(ib), span));
      a_same = false;
    } else {
      s.fail(span, fn + ": the batch dims of " + describe(s, a) + " and " + describe(s, b) +
                       " do not broadcast" +
                       (ops::dim_equal(da, db) == ops::Tri::kNo ? "" : " (symbolic dims: broadcast_to them first)"));
    }
  }
  auto widen = [&](const Value& x, bool same) {
    if (same) return x;
    std::vector<Value> shape = dims;
    const size_t r = s.tensor_rank(x);
    shape.push_back(s.shape_item(x, int64_t(r - 2), span));
    shape.push_back(s.shape_item(x, int64_t(r - 1), span));
    Args args;
    args.span = span;
    args.pos = {x, make_tuple(shape)};
    return s.call_sg("broadcast_to", args);
  };
  return {widen(a, a_same), widen(b, b_same)};
}

ops::Attrs axes_attr(std::vector<int64_t> axes) {
  ops::Attrs at;
  at.values = {ops::AttrValue::Ints(std::move(axes))};
  return at;
}

// solve and triangular_solve: a [..., n, n] with b [..., n, k] or b [n] (a vector).
Value solve_like(Stager& s, const Args& a, const std::string& fn, bool triangular) {
  BoundArgs b = triangular ? BoundArgs(s, a, fn, {"a", "b", "lower"}, 2) : BoundArgs(s, a, fn, {"a", "b"}, 2);
  Value m = matrix(s, b[0], fn, true, a.span);
  Value rhs = as_f32(s, b[1], fn, a.span);
  const size_t rank = s.tensor_rank(rhs);
  if (rank == 0) s.fail(a.span, fn + ": the right-hand side must have rank 1 or more, got " + describe(s, rhs));
  const bool vector = rank == 1;
  if (vector) rhs = s.apply(ops::OpId::ExpandDims, axes_attr({1}), {rhs}, a.span);
  const ir::Type tm = s.tensor_type(m), tr = s.tensor_type(rhs);
  if (ops::dim_equal(tm.shape.back(), tr.shape[tr.rank() - 2]) == ops::Tri::kNo)
    s.fail(a.span, fn + ": " + describe(s, m) + " and " + describe(s, b[1].is_tensor() ? b[1] : rhs) +
                       " do not fit: the right-hand side's " + (vector ? "length" : "rows (its second-to-last dim)") +
                       " must equal the matrix's size");
  auto [mm, rr] = broadcast_batch(s, m, rhs, fn, a.span);
  ops::Attrs attrs;
  if (triangular) attrs.values = {ops::AttrValue::Int(b.has(2) && s.truth(b[2], a.span, "lower") ? 1 : 0)};
  Value x = s.apply(triangular ? ops::OpId::TriangularSolve : ops::OpId::Solve, std::move(attrs), {mm, rr}, a.span);
  if (vector) x = s.apply(ops::OpId::Squeeze, axes_attr({int64_t(s.tensor_rank(x) - 1)}), {x}, a.span);
  return x;
}

Value un(Stager& s, ops::OpId op, const Value& x, SourceSpan span) { return s.apply(op, {}, {x}, span); }

// The vector norm of `ord` along one axis.
Value vector_norm(Stager& s, const Value& x, const Value& ord, int64_t axis, bool keepdims, const std::string& fn,
                  SourceSpan span) {
  const Value ax(axis);
  if (ord.is<NoneV>()) return un(s, ops::OpId::Sqrt, reduce(s, ops::OpId::Sum, un(s, ops::OpId::Square, x, span), ax, keepdims, span), span);
  if (!ord.is_number() || ord.is<bool>()) s.fail(span, fn + ": a vector's ord must be a number, got " + py_repr(ord));
  const double p = ord.is<double>() ? ord.as<double>() : double(ord.as<int64_t>());
  const Value mag = un(s, ops::OpId::Abs, x, span);
  if (std::isinf(p)) return reduce(s, p > 0 ? ops::OpId::Max : ops::OpId::Min, mag, ax, keepdims, span);
  if (p == 0) {
    const Value nonzero = s.cast(s.tensor_binary(ops::OpId::NotEqual, x, Value(0.0), span), s.tensor_dtype(x), span);
    return reduce(s, ops::OpId::Sum, nonzero, ax, keepdims, span);
  }
  if (p == 1) return reduce(s, ops::OpId::Sum, mag, ax, keepdims, span);
  if (p == 2) return un(s, ops::OpId::Sqrt, reduce(s, ops::OpId::Sum, un(s, ops::OpId::Square, x, span), ax, keepdims, span), span);
  const Value powered = s.tensor_binary(ops::OpId::Pow, mag, Value(p), span);
  return s.tensor_binary(ops::OpId::Pow, reduce(s, ops::OpId::Sum, powered, ax, keepdims, span), Value(1.0 / p), span);
}

// The matrix norm of `ord` over axes (r, c): Frobenius, or NumPy's 1 / inf / -1 / -inf.
Value matrix_norm(Stager& s, const Value& x, const Value& ord, int64_t r, int64_t c, bool keepdims,
                  const std::string& fn, SourceSpan span) {
  const Value both = make_tuple({Value(r), Value(c)});
  if (ord.is<NoneV>() || (ord.is<std::string>() && ord.as<std::string>() == "fro"))
    return un(s, ops::OpId::Sqrt, reduce(s, ops::OpId::Sum, un(s, ops::OpId::Square, x, span), both, keepdims, span), span);
  const bool number = ord.is_number() && !ord.is<bool>();
  const double p = !number ? 0 : ord.is<double>() ? ord.as<double>() : double(ord.as<int64_t>());
  if (!number || !(std::fabs(p) == 1 || std::isinf(p)))
    s.fail(span, fn + ": matrix ord " + py_repr(ord) +
                     " is not supported ('fro', 1, -1, inf and -inf are; 2, -2 and 'nuc' need singular values)");
  // ord ±1: the largest (smallest) column sum of |x|; ±inf: the largest (smallest) row sum.
  const int64_t summed = std::isinf(p) ? c : r, other = std::isinf(p) ? r : c;
  const Value sums = reduce(s, ops::OpId::Sum, un(s, ops::OpId::Abs, x, span), Value(summed), true, span);
  return reduce(s, p > 0 ? ops::OpId::Max : ops::OpId::Min, sums, keepdims ? Value(other) : both, keepdims, span);
}

Value norm(Stager& s, const Args& a, const std::string& fn) {
  BoundArgs b(s, a, fn, {"x", "ord", "axis", "keepdims"}, 1);
  Value x = s.to_tensor(b[0], std::nullopt, a.span);
  if (!is_float(s.tensor_dtype(x))) x = s.cast(x, DType::kF32, a.span);
  const size_t rank = s.tensor_rank(x);
  const Value ord = b.get(1, Value());
  const bool keepdims = b.has(3) && s.truth(b[3], a.span, "keepdims");
  if (!b.has(2)) {
    if (ord.is<NoneV>()) {  // the 2-norm of the flattened tensor
      return un(s, ops::OpId::Sqrt, reduce(s, ops::OpId::Sum, un(s, ops::OpId::Square, x, a.span), Value(), keepdims, a.span), a.span);
    }
    if (rank == 1) return vector_norm(s, x, ord, 0, keepdims, fn, a.span);
    if (rank == 2) return matrix_norm(s, x, ord, 0, 1, keepdims, fn, a.span);
    s.fail(a.span, fn + ": an ord needs axis= for a tensor of rank " + std::to_string(rank) + " (" + describe(s, x) + ")");
  }
  const std::vector<Value> items =
      b[2].is<TuplePtr>() || b[2].is<ListPtr>() ? s.to_list(b[2], a.span) : std::vector<Value>{b[2]};
  if (items.size() == 1)
    return vector_norm(s, x, ord, normalize_axis(s, items[0], rank, a.span), keepdims, fn, a.span);
  if (items.size() != 2) s.fail(a.span, fn + ": axis must be an int or a pair of ints");
  const int64_t r = normalize_axis(s, items[0], rank, a.span), c = normalize_axis(s, items[1], rank, a.span);
  if (r == c) s.fail(a.span, fn + ": the two axes of a matrix norm must differ");
  return matrix_norm(s, x, ord, r, c, keepdims, fn, a.span);
}

Value call(Stager& s, const Args& a, const std::string& name) {
  const std::string f = name.size() > 7 ? name.substr(7) : "";
  const std::string fn = "sg.linalg." + f;
  if (f == "solve" || f == "triangular_solve") return solve_like(s, a, fn, f == "triangular_solve");
  if (f == "norm") return norm(s, a, fn);
  if (f.empty()) s.fail(a.span, "sg.linalg is a module; call one of its functions (sg.linalg.inv, sg.linalg.solve, ...)");
  if (f == "qr") {
    BoundArgs b(s, a, fn, {"a", "mode"}, 1);
    if (b.has(1) && !(b[1].is<std::string>() && b[1].as<std::string>() == "reduced"))
      s.fail(a.span, fn + ": only mode='reduced' is supported, got " + py_repr(b[1]));
    return make_tuple(s.apply_all(ops::OpId::Qr, {}, {matrix(s, b[0], fn, false, a.span)}, a.span));
  }
  if (f == "eigh") {
    BoundArgs b(s, a, fn, {"a", "UPLO"}, 1);
    Value m = matrix(s, b[0], fn, true, a.span);
    const std::string uplo = b.has(1) && b[1].is<std::string>() ? b[1].as<std::string>() : b.has(1) ? "?" : "L";
    if (uplo != "L" && uplo != "U") s.fail(a.span, fn + ": UPLO must be 'L' or 'U', got " + py_repr(b[1]));
    if (uplo == "U") {  // the kernel reads the lower triangle: the upper one's transpose
      const int64_t r = int64_t(s.tensor_rank(m));
      std::vector<Value> perm;
      for (int64_t i = 0; i < r; ++i) perm.push_back(Value(i == r - 2 ? r - 1 : i == r - 1 ? r - 2 : i));
      m = transpose(s, m, make_tuple(perm), a.span);
    }
    return make_tuple(s.apply_all(ops::OpId::Eigh, {}, {m}, a.span));
  }
  BoundArgs b(s, a, fn, {"a"}, 1);
  const Value m = matrix(s, b[0], fn, true, a.span);
  if (f == "inv") return s.apply(ops::OpId::Inv, {}, {m}, a.span);
  if (f == "cholesky") return s.apply(ops::OpId::Cholesky, {}, {m}, a.span);
  const std::vector<Value> sl = s.apply_all(ops::OpId::Slogdet, {}, {m}, a.span);
  if (f == "slogdet") return make_tuple(sl);
  // det: sign * exp(logabsdet) (0 * 0 for a singular matrix).
  return s.tensor_binary(ops::OpId::Mul, sl[0], un(s, ops::OpId::Exp, sl[1], a.span), a.span);
}

}  // namespace

Value sg_linalg(Stager& s, const Args& a, const std::string& name) { return call(s, a, name); }

Value sg_linalg_attribute(Stager& s, const std::string& name, SourceSpan span) {
  for (const char* f : kFunctions)
    if (name == f) return Value(SgMember{"linalg." + name});
  s.fail(span, "module 'stagegraph.linalg' has no attribute '" + name + "'");
}

Value sg_matmul(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"a", "b"}, 2);
  Value x = s.to_tensor(b[0], std::nullopt, a.span), y = s.to_tensor(b[1], std::nullopt, a.span);
  if (name == "dot" && (s.tensor_rank(x) == 0 || s.tensor_rank(y) == 0)) return s.binary(BinOp::kMul, x, y, a.span);
  const size_t p = s.tensor_rank(x), q = s.tensor_rank(y);
  if (name == "dot" && p >= 2 && q >= 3) {
    // NumPy's dot of [A..., m, k] and [B..., k, n] is [A..., m, B..., n], the sum
    // over k. Unlike matmul it pairs every row of x with every matrix of y: x
    // becomes [A..., m, 1 (q-2 times), 1, k], whose batch dims broadcast against
    // y's, and the product [A..., m, B..., 1, n] loses its row dim. Where matmul
    // and dot agree (either rank at most 2, x of rank 1) matmul runs as it is.
    const ir::Type tx = s.tensor_type(x), ty = s.tensor_type(y);
    if (ops::dim_equal(tx.shape.back(), ty.shape[q - 2]) == ops::Tri::kNo)
      s.fail(a.span, "dot: shapes " + s.module().format_type(tx) + " and " + s.module().format_type(ty) +
                         " are not aligned: the last dim of the first and the second-to-last of the second differ");
    std::vector<int64_t> axes;
    for (size_t i = 0; i + 1 < q; ++i) axes.push_back(int64_t(p - 1 + i));
    ops::Attrs expand;
    expand.values = {ops::AttrValue::Ints(axes)};
    const Value rows = s.apply(ops::OpId::ExpandDims, std::move(expand), {x}, a.span);
    const Value product = s.binary(BinOp::kMatMul, rows, y, a.span);
    ops::Attrs squeeze;
    squeeze.values = {ops::AttrValue::Ints({int64_t(p + q - 3)})};
    return s.apply(ops::OpId::Squeeze, std::move(squeeze), {product}, a.span);
  }
  return s.binary(BinOp::kMatMul, x, y, a.span);
}

}  // namespace sg::compiler::staging
