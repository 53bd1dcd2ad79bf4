// Rules of the ops the -O2 compiler fuses: fully_connected (matmul + bias +
// activation) and conv2d_bias (conv2d + bias + activation). Each checks its
// unfused core with that op's rule, then the bias: f32, rank 1, one entry per
// output channel (the last dim of the result). elementwise_chain runs each
// step's own rule, then checks the shapes one pass over the result needs.
#include "ops/infer_rules.h"

namespace sg::ops::rules {
namespace {

template <class D>
Status check_bias(const Rule<D>& r, const TensorType<D>& bias, const D& channels) {
  if (bias.dtype != DType::kF32 || bias.rank() != 1 || dim_equal(bias.shape[0], channels) == Tri::kNo) {
    return r.error("bias must be f32[", dim_text(r, channels), "], got ", dtype_name(bias.dtype), r.fmt(bias.shape));
  }
  return Status::Ok();
}

}  // namespace

template <class D>
Status infer_fully_connected(const Rule<D>& r) {
  const TensorType<D>& x = r.in[0];
  const TensorType<D>& w = r.in[1];
  if (x.dtype != DType::kF32 || w.dtype != DType::kF32) {
    return r.error("operands must be f32, got ", dtype_name(x.dtype), " and ", dtype_name(w.dtype));
  }
  if (x.rank() == 0 || w.rank() != 2) {
    return r.error("needs x of rank >= 1 and w of rank 2, got ", r.fmt(x.shape), " and ", r.fmt(w.shape));
  }
  const Rule<D> core{OpId::MatMul, r.attrs, r.in.subspan(0, 2), r.scalars, r.out, r.ctx};
  SG_RETURN_IF_ERROR(infer_matmul(core));
  return check_bias(r, r.in[2], w.shape[1]);
}

template <class D>
Status infer_conv2d_bias(const Rule<D>& r) {
  // conv2d's rule reads attributes 0..3, which conv2d_bias keeps at those positions.
  const Rule<D> core{OpId::Conv2D, r.attrs, r.in.subspan(0, 2), r.scalars, r.out, r.ctx};
  SG_RETURN_IF_ERROR(infer_conv2d(core));
  if (r.in[0].dtype != DType::kF32) return r.error("input must be f32, got ", dtype_name(r.in[0].dtype));
  return check_bias(r, r.in[2], r.in[1].shape[3]);
}

template <class D>
Status infer_elementwise_chain(const Rule<D>& r) {
  const std::vector<int64_t>& steps = r.attrs.ints(attr::kChainSteps);  // checked by check_attrs
  for (size_t i = 0; i < r.in.size(); ++i)
    if (r.in[i].dtype != DType::kF32)
      return r.error("input ", std::to_string(i), " must be f32, got ", dtype_name(r.in[i].dtype));
  std::vector<TensorType<D>> values(r.in.begin(), r.in.end());
  std::vector<TensorType<D>> step_out;
  for (size_t j = 0; j < steps.size() / 3; ++j) {
    const OpId op = OpId(steps[3 * j]);
    std::vector<TensorType<D>> operands{values[size_t(steps[3 * j + 1])]};
    if (steps[3 * j + 2] >= 0) operands.push_back(values[size_t(steps[3 * j + 2])]);
    const std::vector<std::optional<D>> none(operands.size());
    SG_RETURN_IF_ERROR(infer<D>(op, Attrs{}, operands, none, step_out, r.ctx));
    values.push_back(step_out[0]);
  }
  const TensorType<D>& result = values.back();
  const auto same_shape = [&](const std::vector<D>& s) {
    if (s.size() != result.rank()) return false;
    for (size_t d = 0; d < s.size(); ++d)
      if (dim_equal(s[d], result.shape[d]) != Tri::kYes) return false;
    return true;
  };
  const auto one_element = [&](const std::vector<D>& s) {
    if (s.size() > result.rank()) return false;
    for (const D& d : s)
      if (dim_equal(d, D(1)) != Tri::kYes) return false;
    return true;
  };
  for (size_t v = 0; v < values.size(); ++v) {
    const bool input = v < r.in.size();
    if (same_shape(values[v].shape) || (input && one_element(values[v].shape))) continue;
    return r.error((input ? "input " + std::to_string(v) : "step " + std::to_string(v - r.in.size())), " is ",
                   r.fmt(values[v].shape), ", neither the result's shape ", r.fmt(result.shape),
                   (input ? " nor one element" : ""));
  }
  for (TensorType<D>& o : r.out) o = result;  // every output has the last step's type
  return Status::Ok();
}

SG_INSTANTIATE_RULE(infer_fully_connected)
SG_INSTANTIATE_RULE(infer_conv2d_bias)
SG_INSTANTIATE_RULE(infer_elementwise_chain)

}  // namespace sg::ops::rules
