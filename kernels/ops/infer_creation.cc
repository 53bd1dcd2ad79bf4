// Rules of the creation ops: full (a target shape that may name dynamic inputs),
// eye (all attributes), arange (a length computed from its operands' values) and
// one_hot.
#include <cstdlib>
#include <limits>

#include "ops/infer_rules.h"

namespace sg::ops::rules {
namespace {

// max(ceil((stop - start) / step), 0) when it is known exactly; at compile time
// a symbolic span counts only when it cannot be negative (arange(len(b) + 1) is
// [M+1]), else the length is a fresh dim.
template <class D>
Result<D> integer_arange_length(const Rule<D>& r) {
  SG_ASSIGN_OR_RETURN(std::optional<D> start, dynamic_scalar(r, 0));
  SG_ASSIGN_OR_RETURN(std::optional<D> stop, dynamic_scalar(r, 1));
  SG_ASSIGN_OR_RETURN(std::optional<D> step, dynamic_scalar(r, 2));
  const std::optional<int64_t> s = step ? dim_static(*step) : std::nullopt;
  if (s && *s == 0) return r.error("step cannot be zero");
  if (!start || !stop || !s) return unknown_dim(r, "the length of an arange with staged bounds");
  const std::optional<int64_t> a = dim_static(*start);
  const std::optional<int64_t> b = dim_static(*stop);
  if (a && b) {
    // 128-bit: stop - start of two int64 values does not fit in 64 bits.
    const __int128 span = *s > 0 ? __int128(*b) - *a : __int128(*a) - *b;
    const __int128 stride = *s > 0 ? __int128(*s) : -__int128(*s);
    const __int128 n = span <= 0 ? 0 : (span + stride - 1) / stride;
    if (n > std::numeric_limits<int64_t>::max()) return r.error("the result has too many elements");
    return D(int64_t(n));
  }
  if (*s != std::numeric_limits<int64_t>::min()) {
    const D span = *s > 0 ? *stop - *start : *start - *stop;
    const int64_t stride = std::llabs(*s);
    if (known_nonnegative(span)) {
      if (stride == 1) return span;
      if (std::optional<D> q = dim_div_exact(span, D(stride))) return *q;
      if (std::optional<D> q = dim_div_exact(span + D(stride - 1), D(stride))) return *q;
    }
  }
  return unknown_dim(r, "the length of an arange with symbolic bounds");
}

// A float arange's length is its 4th input (see attr::kArangeFloatInputs).
template <class D>
Result<D> float_arange_length(const Rule<D>& r) {
  SG_ASSIGN_OR_RETURN(std::optional<D> n, dynamic_scalar(r, 3));
  if (!n) return unknown_dim(r, "the length of an arange with staged bounds");
  if (std::optional<int64_t> s = dim_static(*n); s && *s < 0) {
    return r.error("the length ", std::to_string(*s), " is negative");
  }
  return *n;
}

}  // namespace

template <class D>
Status infer_eye(const Rule<D>& r) {
  r.set_output(DType(r.attrs.i(attr::kEyeDType)), {D(r.attrs.i(attr::kEyeN)), D(r.attrs.i(attr::kEyeM))});
  return Status::Ok();
}

template <class D>
Status infer_arange(const Rule<D>& r) {
  const DType t = r.in[0].dtype;
  if (r.in[1].dtype != t || r.in[2].dtype != t) {
    return r.error("start, stop and step must have one dtype, got ", dtype_name(t), ", ", dtype_name(r.in[1].dtype),
                   " and ", dtype_name(r.in[2].dtype), "; cast with astype");
  }
  if (t == DType::kBool) return r.error("start, stop and step must be numbers, got bool");
  const size_t inputs = size_t(is_float(t) ? attr::kArangeFloatInputs : attr::kArangeIntInputs);
  if (r.in.size() != inputs) {
    return r.error(is_float(t) ? "a float" : "an integer", " arange takes ", std::to_string(inputs), " inputs, got ",
                   std::to_string(r.in.size()));
  }
  SG_ASSIGN_OR_RETURN(D length, is_float(t) ? float_arange_length(r) : integer_arange_length(r));
  r.set_output(t, {std::move(length)});
  return Status::Ok();
}

template <class D>
Status infer_one_hot(const Rule<D>& r) {
  const TensorType<D>& idx = r.in[0];
  if (!is_int(idx.dtype)) return r.error("indices must be i32 or i64, got ", dtype_name(idx.dtype));
  std::vector<D> dims = idx.shape;
  dims.push_back(D(r.attrs.i(attr::kOneHotDepth)));
  r.set_output(DType(r.attrs.i(attr::kOneHotDType)), std::move(dims));
  return Status::Ok();
}

template <class D>
Status infer_full(const Rule<D>& r) {
  if (r.in[0].rank() != 0) return r.error("the fill value must be a scalar, got ", r.fmt(r.in[0].shape));
  std::vector<D> dims;
  std::optional<size_t> infer_pos;
  SG_RETURN_IF_ERROR(resolve_target(r, dims, infer_pos));
  r.set_output(r.in[0].dtype, std::move(dims));
  return Status::Ok();
}

SG_INSTANTIATE_RULE(infer_eye)
SG_INSTANTIATE_RULE(infer_arange)
SG_INSTANTIATE_RULE(infer_one_hot)
SG_INSTANTIATE_RULE(infer_full)

}  // namespace sg::ops::rules
