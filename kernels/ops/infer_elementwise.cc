// Rules of the elementwise ops: binary with NumPy broadcasting, unary, where,
// clip and cast.
#include <array>

#include "ops/infer_rules.h"

namespace sg::ops::rules {
namespace {

// Axes of `result` that `operand` did not have (missing, or a 1 broadcast up).
template <class D>
std::vector<size_t> gained_axes(const std::vector<D>& operand, const std::vector<D>& result) {
  std::vector<size_t> gained;
  const size_t offset = result.size() - operand.size();
  for (size_t i = 0; i < result.size(); ++i) {
    if (is_static_value(result[i], 1)) continue;
    if (i < offset || is_static_value(operand[i - offset], 1)) gained.push_back(i);
  }
  return gained;
}

// SPEC §8: [N] with [N, 1] silently gives [N, N]. Flagged when the ranks differ
// (the implicit leading axis is the surprise) and each operand is stretched along
// an axis whose size equals one the other operand was stretched along. Explicit
// outer products ([N, 1] with [1, M], or [M] with [N, 1]) stay quiet.
template <class D>
bool is_suspicious_broadcast(const std::vector<D>& a, const std::vector<D>& b,
                             const std::vector<D>& result) {
  if (a.size() == b.size()) return false;
  const std::vector<size_t> ga = gained_axes(a, result);
  const std::vector<size_t> gb = gained_axes(b, result);
  for (size_t i : ga) {
    for (size_t j : gb) {
      if (dim_equal(result[i], result[j]) == Tri::kYes) return true;
    }
  }
  return false;
}

template <class D>
Status check_same_dtypes(const Rule<D>& r, DType a, DType b, const char* what) {
  if (a == b) return Status::Ok();
  return r.error(what, " have different dtypes ", dtype_name(a), " and ", dtype_name(b), "; cast one with astype");
}

// SPEC §8: symbolic dims that must match but can only be equal for an empty
// tensor (N*3 against N), or for no binding at all (N*2 against 5: it is neither
// 5 nor 1), fail at run time for every real input: a warning now, one per node.
template <class D>
void warn_unbroadcastable(const Rule<D>& r, size_t first, std::span<const std::vector<D>* const> shapes,
                          const std::vector<D>& result) {
  if constexpr (!kRuleWarnings) return;
  std::string operands;
  for (size_t j = first; j < r.in.size(); ++j) operands += (j > first ? " with " : "") + r.fmt(r.in[j].shape);
  for (size_t i = first; i < r.in.size(); ++i) {
    const std::vector<D>& s = r.in[i].shape;
    const size_t offset = result.size() - s.size();
    for (size_t k = 0; k < s.size(); ++k) {
      if (!dim_equal_only_when_empty(s[k], result[offset + k])) continue;
      r.ctx.warn(std::string(r.name()) + ": cannot broadcast " + operands + ": " + dim_text(r, s[k]) + " and " +
                 dim_text(r, result[offset + k]) + " are equal only when both are 0, so this fails at run time "
                 "for every non-empty input");
      return;
    }
  }
  if (std::optional<std::string> why = never_broadcast(r, shapes)) {
    r.ctx.warn(std::string(r.name()) + ": cannot broadcast " + operands + ": " + *why);
  }
}

template <class D>
Status broadcast_inputs(const Rule<D>& r, size_t first, std::vector<D>& result) {
  std::vector<const std::vector<D>*> shapes;
  for (size_t i = first; i < r.in.size(); ++i) shapes.push_back(&r.in[i].shape);
  if (broadcast_shapes<D>(shapes, result)) {
    warn_unbroadcastable<D>(r, first, shapes, result);
    return Status::Ok();
  }
  std::string msg = "cannot broadcast ";
  for (size_t i = first; i < r.in.size(); ++i) {
    if (i > first) msg += " with ";
    msg += r.fmt(r.in[i].shape);
  }
  return r.error(msg);
}

}  // namespace

template <class D>
Status infer_binary(const Rule<D>& r) {
  const TensorType<D>& a = r.in[0];
  const TensorType<D>& b = r.in[1];
  SG_RETURN_IF_ERROR(check_same_dtypes(r, a.dtype, b.dtype, "operands"));
  SG_RETURN_IF_ERROR(check_binary_dtype(r.op, a.dtype));
  std::vector<D> shape;
  SG_RETURN_IF_ERROR(broadcast_inputs(r, 0, shape));
  if (kRuleWarnings && is_suspicious_broadcast(a.shape, b.shape, shape)) {
    r.ctx.warn(std::string(r.name()) + ": broadcasting " + r.fmt(a.shape) + " with " + r.fmt(b.shape) +
               " gives " + r.fmt(shape) + "; did you mean to reshape one of them?");
  }
  r.set_output(binary_result_dtype(r.op, a.dtype), std::move(shape));
  return Status::Ok();
}

template <class D>
Status infer_unary(const Rule<D>& r) {
  SG_RETURN_IF_ERROR(check_unary_dtype(r.op, r.in[0].dtype));
  r.set_output(unary_result_dtype(r.op, r.in[0].dtype), r.in[0].shape);
  return Status::Ok();
}

template <class D>
Status infer_where(const Rule<D>& r) {
  const TensorType<D>& cond = r.in[0];
  if (cond.dtype != DType::kBool) {
    return r.error("condition must be bool, got ", dtype_name(cond.dtype));
  }
  SG_RETURN_IF_ERROR(check_same_dtypes(r, r.in[1].dtype, r.in[2].dtype, "value operands"));
  std::vector<D> shape;
  SG_RETURN_IF_ERROR(broadcast_inputs(r, 0, shape));
  r.set_output(r.in[1].dtype, std::move(shape));
  return Status::Ok();
}

template <class D>
Status infer_clip(const Rule<D>& r) {
  SG_RETURN_IF_ERROR(check_same_dtypes(r, r.in[0].dtype, r.in[1].dtype, "x and lo"));
  SG_RETURN_IF_ERROR(check_same_dtypes(r, r.in[0].dtype, r.in[2].dtype, "x and hi"));
  if (r.in[0].dtype == DType::kBool) return r.error("not defined for bool; cast with astype");
  std::vector<D> shape;
  SG_RETURN_IF_ERROR(broadcast_inputs(r, 0, shape));
  r.set_output(r.in[0].dtype, std::move(shape));
  return Status::Ok();
}

template <class D>
Status infer_cast(const Rule<D>& r) {
  r.set_output(DType(r.attrs.i(attr::kCastDType)), r.in[0].shape);  // range checked by check_attrs
  return Status::Ok();
}

SG_INSTANTIATE_RULE(infer_binary)
SG_INSTANTIATE_RULE(infer_unary)
SG_INSTANTIATE_RULE(infer_where)
SG_INSTANTIATE_RULE(infer_clip)
SG_INSTANTIATE_RULE(infer_cast)

}  // namespace sg::ops::rules
