// Rules of the neural-network ops: softmax, log_softmax, conv2d,
// max_pool2d, avg_pool2d (NHWC activations, HWIO filters; SPEC §7), layer_norm.
#include "ops/infer_rules.h"

namespace sg::ops::rules {
namespace {

template <class D>
Status check_rank4_float(const Rule<D>& r, const TensorType<D>& t, const char* what, const char* layout) {
  if (t.rank() != 4) {
    return r.error(what, " must be rank 4 (", layout, "), got ", r.fmt(t.shape));
  }
  if (!is_float(t.dtype)) {
    return r.error(what, " must be float, got ", dtype_name(t.dtype), "; cast with astype");
  }
  return Status::Ok();
}

// Output size of a window (kernel size k, dilation) sliding over `in` (SPEC §7):
// VALID floor((in - (k-1)*dilation - 1) / stride) + 1, SAME ceil(in / stride).
template <class D>
Result<D> window_output(const Rule<D>& r, const D& in, const D& k, int64_t stride, int64_t dilation, bool same,
                        const std::vector<D>& input_shape) {
  if (same) {
    if (stride == 1) return in;
    if (std::optional<int64_t> s = dim_static(in)) return D((*s + stride - 1) / stride);
    if (std::optional<D> q = dim_div_exact(in, D(stride))) return *q;
    return unknown_dim(r, "ceil(in / stride) of a symbolic dim");
  }
  const D effective = (k - D(1)) * D(dilation) + D(1);
  const D span = in - effective;
  if (std::optional<int64_t> s = dim_static(span)) {
    if (*s < 0) {
      return r.error("the window (size ", dim_text(r, effective), " with dilation) is larger than the input ",
                     r.fmt(input_shape), " along a dim of size ", dim_text(r, in));
    }
    return D(*s / stride + 1);
  }
  if (std::optional<D> q = dim_div_exact(span, D(stride))) return *q + D(1);
  return unknown_dim(r, "the output size of a strided window over a symbolic dim");
}

bool is_same_padding(const std::string& padding) { return padding == "SAME"; }  // else VALID (check_attrs)

}  // namespace

template <class D>
Status infer_softmax(const Rule<D>& r) {
  const TensorType<D>& x = r.in[0];
  if (!is_float(x.dtype)) {
    return r.error("needs a float input, got ", dtype_name(x.dtype), "; cast with astype");
  }
  const size_t axis = size_t(r.attrs.i(attr::kAxisValue));
  if (kRuleWarnings && is_static_value(x.shape[axis], 1)) {
    r.ctx.warn(std::string(r.name()) + " over an axis of size 1 is always " +
               (r.op == OpId::Softmax ? "1" : "0") + " (input " + r.fmt(x.shape) + ", axis " +
               std::to_string(axis) + ")");
  }
  r.set_output(x.dtype, x.shape);
  return Status::Ok();
}

template <class D>
Status infer_conv2d(const Rule<D>& r) {
  const TensorType<D>& x = r.in[0];
  const TensorType<D>& w = r.in[1];
  SG_RETURN_IF_ERROR(check_rank4_float(r, x, "input", "NHWC"));
  SG_RETURN_IF_ERROR(check_rank4_float(r, w, "filter", "HWIO"));
  if (x.dtype != w.dtype) {
    return r.error("input and filter have different dtypes ", dtype_name(x.dtype), " and ", dtype_name(w.dtype),
                   "; cast one with astype");
  }
  const int64_t groups = r.attrs.i(attr::kConvGroups);
  if (dim_equal(x.shape[3], w.shape[2] * D(groups)) == Tri::kNo) {
    return r.error("input channels do not match the filter: ", r.fmt(x.shape), " with filter ", r.fmt(w.shape),
                   " and groups ", std::to_string(groups), " needs ", dim_text(r, w.shape[2] * D(groups)),
                   " input channels");
  }
  const D needed = w.shape[2] * D(groups);
  if (kRuleWarnings && dim_never_equal(x.shape[3], needed)) {  // kNo returned above: only symbolic dims get here
    r.ctx.warn(std::string(r.name()) + ": input channels do not match the filter: " + r.fmt(x.shape) +
               " with filter " + r.fmt(w.shape) + " and groups " + std::to_string(groups) + " needs " +
               dim_text(r, needed) + " input channels, and " + dim_text(r, x.shape[3]) + " cannot be " +
               dim_text(r, needed) + fails_for_every_input(r, {x.shape[3], needed}));
  }
  const std::optional<int64_t> cout = dim_static(w.shape[3]);
  if (cout && *cout % groups != 0) {
    return r.error("output channels ", std::to_string(*cout), " of filter ", r.fmt(w.shape),
                   " are not divisible by groups ", std::to_string(groups));
  }
  const std::vector<int64_t>& stride = r.attrs.ints(attr::kConvStride);
  const std::vector<int64_t>& dilation = r.attrs.ints(attr::kConvDilation);
  const bool same = is_same_padding(r.attrs.s(attr::kConvPadding));
  SG_ASSIGN_OR_RETURN(D oh, window_output(r, x.shape[1], w.shape[0], stride[0], dilation[0], same, x.shape));
  SG_ASSIGN_OR_RETURN(D ow, window_output(r, x.shape[2], w.shape[1], stride[1], dilation[1], same, x.shape));
  r.set_output(x.dtype, {x.shape[0], oh, ow, w.shape[3]});
  return Status::Ok();
}

template <class D>
Status infer_pool2d(const Rule<D>& r) {
  const TensorType<D>& x = r.in[0];
  SG_RETURN_IF_ERROR(check_rank4_float(r, x, "input", "NHWC"));
  const std::vector<int64_t>& size = r.attrs.ints(attr::kPoolSize);
  const std::vector<int64_t>& stride = r.attrs.ints(attr::kPoolStride);
  const bool same = is_same_padding(r.attrs.s(attr::kPoolPadding));
  SG_ASSIGN_OR_RETURN(D oh, window_output(r, x.shape[1], D(size[0]), stride[0], 1, same, x.shape));
  SG_ASSIGN_OR_RETURN(D ow, window_output(r, x.shape[2], D(size[1]), stride[1], 1, same, x.shape));
  r.set_output(x.dtype, {x.shape[0], oh, ow, x.shape[3]});
  return Status::Ok();
}

// gamma and beta scale and shift the last axis: [], [1] or [d] (SPEC §7), so the
// result keeps x's shape.
template <class D>
Status infer_layer_norm(const Rule<D>& r) {
  const TensorType<D>& x = r.in[0];
  if (!is_float(x.dtype)) {
    return r.error("needs a float input, got ", dtype_name(x.dtype), "; cast with astype");
  }
  if (x.rank() == 0) return r.error("needs an input with at least one dim, got ", r.fmt(x.shape));
  bool warned = false;  // one warning per node
  for (size_t k : {size_t(1), size_t(2)}) {
    const char* what = k == 1 ? "gamma" : "beta";
    const TensorType<D>& p = r.in[k];
    if (p.dtype != x.dtype) {
      return r.error(what, " is ", dtype_name(p.dtype), " but x is ", dtype_name(x.dtype), "; cast with astype");
    }
    bool fits = p.rank() <= 1;
    if (fits && p.rank() == 1 && !is_static_value(p.shape[0], 1)) {
      fits = dim_equal(p.shape[0], x.shape.back()) != Tri::kNo;
    }
    const auto mismatch = [&] {
      return std::string(what) + " " + r.fmt(p.shape) + " does not match the last dim of " + r.fmt(x.shape) +
             " (it must be [" + dim_text(r, x.shape.back()) + "], [1] or a scalar)";
    };
    if (!fits) return r.error(mismatch());
    if (kRuleWarnings && p.rank() == 1 && !warned) {
      if (std::optional<std::string> why = never_one_or(r, p.shape[0], x.shape.back())) {
        r.ctx.warn(std::string(r.name()) + ": " + mismatch() + ": " + *why);
        warned = true;
      }
    }
  }
  r.set_output(x.dtype, x.shape);
  return Status::Ok();
}

SG_INSTANTIATE_RULE(infer_softmax)
SG_INSTANTIATE_RULE(infer_conv2d)
SG_INSTANTIATE_RULE(infer_pool2d)
SG_INSTANTIATE_RULE(infer_layer_norm)

}  // namespace sg::ops::rules
