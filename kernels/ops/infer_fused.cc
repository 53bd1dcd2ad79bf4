// Rules of the ops the -O2 compiler fuses: fully_connected (matmul + bias +
// activation) and conv2d_bias (conv2d + bias + activation). Each checks its
// unfused core with that op's rule, then the bias: f32, rank 1, one entry per
// output channel (the last dim of the result).
#include "ops/infer_rules.h"

namespace sg::ops::rules {
namespace {

template <class D>
Status check_bias(const Rule<D>& r, const TensorType<D>& bias, const D& channels) {
  if (bias.dtype != DType::kF32 || bias.rank() != 1 || dim_equal(bias.shape[0], channels) == Tri::kNo) {
    return r.error("bias must be f32[" + dim_text(r, channels) + "], got " + dtype_name(bias.dtype) +
                   r.fmt(bias.shape));
  }
  return Status::Ok();
}

}  // namespace

template <class D>
Status infer_fully_connected(const Rule<D>& r) {
  const TensorType<D>& x = r.in[0];
  const TensorType<D>& w = r.in[1];
  if (x.dtype != DType::kF32 || w.dtype != DType::kF32) {
    return r.error(std::string("operands must be f32, got ") + dtype_name(x.dtype) + " and " + dtype_name(w.dtype));
  }
  if (x.rank() == 0 || w.rank() != 2) {
    return r.error("needs x of rank >= 1 and w of rank 2, got " + r.fmt(x.shape) + " and " + r.fmt(w.shape));
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
  if (r.in[0].dtype != DType::kF32) return r.error(std::string("input must be f32, got ") + dtype_name(r.in[0].dtype));
  return check_bias(r, r.in[2], r.in[1].shape[3]);
}

SG_INSTANTIATE_RULE(infer_fully_connected)
SG_INSTANTIATE_RULE(infer_conv2d_bias)

}  // namespace sg::ops::rules
