// The rule of random (sg.random): a key and a target shape that may name dynamic
// inputs (resolve_target, infer_shape.cc).
#include "ops/infer_rules.h"

namespace sg::ops::rules {

// random(key, dims...): the key is an i64[2] (two 32-bit words); the result is the
// target shape (+ [2] for keys), i64 for bits and keys, f32 for the distributions.
template <class D>
Status infer_random(const Rule<D>& r) {
  const TensorType<D>& key = r.in[0];
  if (key.dtype != DType::kI64 || key.rank() != 1 || dim_static(key.shape[0]) != std::optional<int64_t>(2))
    return r.error("the key must be an i64[2] tensor (sg.random.key), got ", dtype_name(key.dtype), r.fmt(key.shape));
  std::vector<D> dims;
  std::optional<size_t> infer_pos;
  SG_RETURN_IF_ERROR(resolve_target(r, dims, infer_pos));
  const int64_t dist = r.attrs.i(attr::kRandomDistribution);
  if (dist == attr::kKeys) dims.push_back(D(2));
  r.set_output(dist == attr::kKeys || dist == attr::kBits ? DType::kI64 : DType::kF32, std::move(dims));
  return Status::Ok();
}

SG_INSTANTIATE_RULE(infer_random)

}  // namespace sg::ops::rules
