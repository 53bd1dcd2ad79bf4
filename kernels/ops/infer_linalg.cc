// Rules of the linalg family: matmul (NumPy's: 1-D promotion, batch broadcasting)
// and the sg.linalg ops inv, cholesky, solve, triangular_solve, slogdet, qr, eigh,
// which work on the last two axes of their operand (a stack of matrices, batched
// over the leading axes) and take f32 only (NumPy's linalg has no f16 either).
#include "ops/infer_rules.h"

namespace sg::ops::rules {
namespace {

template <class D>
Status check_f32(const Rule<D>& r, const TensorType<D>& t, const char* what) {
  if (t.dtype != DType::kF32)
    return r.error(what, " must be f32, got ", dtype_name(t.dtype), "; cast with astype");
  return Status::Ok();
}

// A stack of square matrices [..., n, n].
template <class D>
Status check_square(const Rule<D>& r, const TensorType<D>& a, const char* what) {
  SG_RETURN_IF_ERROR(check_f32(r, a, what));
  if (a.rank() < 2)
    return r.error(what, " must be a matrix or a stack of them (rank 2 or more), got ", r.fmt(a.shape));
  const D& rows = a.shape[a.rank() - 2];
  const D& cols = a.shape[a.rank() - 1];
  if (dim_equal(rows, cols) == Tri::kNo)
    return r.error(what, " must be square in its last two axes, got ", r.fmt(a.shape));
  return Status::Ok();
}

}  // namespace

// inv(a), cholesky(a): a's type.
template <class D>
Status infer_square(const Rule<D>& r) {
  SG_RETURN_IF_ERROR(check_square(r, r.in[0], "the matrix"));
  r.set_output(DType::kF32, r.in[0].shape);
  return Status::Ok();
}

// solve(a [..., n, n], b [..., n, k]) -> b's type; the batch dims are equal (the
// compiler broadcasts them first, as NumPy does).
template <class D>
Status infer_solve(const Rule<D>& r) {
  const TensorType<D>& a = r.in[0];
  const TensorType<D>& b = r.in[1];
  SG_RETURN_IF_ERROR(check_square(r, a, "the matrix"));
  SG_RETURN_IF_ERROR(check_f32(r, b, "the right-hand side"));
  if (b.rank() != a.rank())
    return r.error("the right-hand side ", r.fmt(b.shape), " must have the matrix's rank, ", r.fmt(a.shape));
  const size_t n = a.rank();
  if (dim_equal(a.shape[n - 1], b.shape[n - 2]) == Tri::kNo)
    return r.error("the matrix ", r.fmt(a.shape), " and the right-hand side ", r.fmt(b.shape),
                   " do not fit: its rows must match the matrix's size");
  for (size_t i = 0; i + 2 < n; ++i)
    if (dim_equal(a.shape[i], b.shape[i]) == Tri::kNo)
      return r.error("the batch dims of ", r.fmt(a.shape), " and ", r.fmt(b.shape), " differ");
  r.set_output(DType::kF32, b.shape);
  return Status::Ok();
}

// slogdet(a [..., n, n]) -> (sign [...], logabsdet [...]).
template <class D>
Status infer_slogdet(const Rule<D>& r) {
  const TensorType<D>& a = r.in[0];
  SG_RETURN_IF_ERROR(check_square(r, a, "the matrix"));
  std::vector<D> batch(a.shape.begin(), a.shape.end() - 2);
  r.out[0] = TensorType<D>{DType::kF32, batch};
  r.out[1] = TensorType<D>{DType::kF32, std::move(batch)};
  return Status::Ok();
}

// qr(a [..., m, n]) -> (q [..., m, k], r [..., k, n]), k = min(m, n).
template <class D>
Status infer_qr(const Rule<D>& r) {
  const TensorType<D>& a = r.in[0];
  SG_RETURN_IF_ERROR(check_f32(r, a, "the matrix"));
  if (a.rank() < 2)
    return r.error("the matrix must be a matrix or a stack of them (rank 2 or more), got ", r.fmt(a.shape));
  const D& m = a.shape[a.rank() - 2];
  const D& n = a.shape[a.rank() - 1];
  D k = m;
  const std::optional<int64_t> sm = dim_static(m), sn = dim_static(n);
  if (sm && sn) {
    k = D(std::min(*sm, *sn));
  } else if (dim_equal(m, n) != Tri::kYes) {
    SG_ASSIGN_OR_RETURN(k, unknown_dim(r, "min(m, n) of qr's symbolic dims"));
  }
  std::vector<D> q(a.shape.begin(), a.shape.end() - 1), rr(a.shape.begin(), a.shape.end() - 2);
  q.push_back(k);
  rr.push_back(k);
  rr.push_back(n);
  r.out[0] = TensorType<D>{DType::kF32, std::move(q)};
  r.out[1] = TensorType<D>{DType::kF32, std::move(rr)};
  return Status::Ok();
}

// eigh(a [..., n, n]) -> (w [..., n] ascending, v [..., n, n]).
template <class D>
Status infer_eigh(const Rule<D>& r) {
  const TensorType<D>& a = r.in[0];
  SG_RETURN_IF_ERROR(check_square(r, a, "the matrix"));
  r.out[0] = TensorType<D>{DType::kF32, std::vector<D>(a.shape.begin(), a.shape.end() - 1)};
  r.out[1] = TensorType<D>{DType::kF32, a.shape};
  return Status::Ok();
}

template <class D>
Status infer_matmul(const Rule<D>& r) {
  const TensorType<D>& a = r.in[0];
  const TensorType<D>& b = r.in[1];
  if (a.rank() == 0 || b.rank() == 0) {
    return r.error("operands must have at least one dimension, got ", r.fmt(a.shape), " @ ", r.fmt(b.shape));
  }
  if (a.dtype != b.dtype) {
    return r.error("operands have different dtypes ", dtype_name(a.dtype), " and ", dtype_name(b.dtype),
                   "; cast one with astype");
  }
  if (a.dtype == DType::kBool) return r.error("not defined for bool operands; cast with astype");
  // NumPy: a 1-D left operand is a row [1, K], a 1-D right one a column [K, 1];
  // the added dim is removed from the result.
  std::vector<D> am = a.shape;
  std::vector<D> bm = b.shape;
  if (am.size() == 1) am.insert(am.begin(), D(1));
  if (bm.size() == 1) bm.push_back(D(1));
  if (dim_equal(am.back(), bm[bm.size() - 2]) == Tri::kNo) {
    return r.error("inner dimensions differ: ", r.fmt(a.shape), " @ ", r.fmt(b.shape));
  }
  const D& ka = am.back();
  const D& kb = bm[bm.size() - 2];
  // SPEC §8: inner dims that only the run-time binding can compare, but that agree
  // for no real input; one warning per node, the inner dims first.
  bool warned = true;
  if (!kRuleWarnings) {
    // compiled out (kRuleWarnings); the run-time checks above and below stay
  } else if (dim_equal_only_when_empty(ka, kb)) {
    r.ctx.warn(std::string(r.name()) + ": inner dimensions " + dim_text(r, ka) + " and " + dim_text(r, kb) + " of " +
               r.fmt(a.shape) + " @ " + r.fmt(b.shape) +
               " are equal only when both are 0, so this fails at run time for every non-empty input");
  } else if (dim_never_equal(ka, kb)) {  // kNo returned above: here only symbolic dims can differ
    r.ctx.warn(std::string(r.name()) + ": inner dimensions " + dim_text(r, ka) + " and " + dim_text(r, kb) + " of " +
               r.fmt(a.shape) + " @ " + r.fmt(b.shape) + " cannot be equal" + fails_for_every_input(r, {ka, kb}));
  } else {
    warned = false;
  }
  const std::vector<D> a_batch(am.begin(), am.end() - 2);
  const std::vector<D> b_batch(bm.begin(), bm.end() - 2);
  const std::vector<D>* batches[] = {&a_batch, &b_batch};
  std::vector<D> dims;
  if (!broadcast_shapes<D>(batches, dims)) {
    return r.error("cannot broadcast the batch dims of ", r.fmt(a.shape), " @ ", r.fmt(b.shape));
  }
  if (kRuleWarnings && !warned) {
    if (std::optional<std::string> why = never_broadcast<D>(r, batches)) {
      r.ctx.warn(std::string(r.name()) + ": cannot broadcast the batch dims of " + r.fmt(a.shape) + " @ " +
                 r.fmt(b.shape) + ": " + *why);
    }
  }
  if (a.rank() > 1) dims.push_back(am[am.size() - 2]);
  if (b.rank() > 1) dims.push_back(bm.back());
  r.set_output(a.dtype, std::move(dims));
  return Status::Ok();
}

SG_INSTANTIATE_RULE(infer_square)
SG_INSTANTIATE_RULE(infer_solve)
SG_INSTANTIATE_RULE(infer_slogdet)
SG_INSTANTIATE_RULE(infer_qr)
SG_INSTANTIATE_RULE(infer_eigh)
SG_INSTANTIATE_RULE(infer_matmul)

}  // namespace sg::ops::rules
