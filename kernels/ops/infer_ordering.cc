// Rules of the ops along one axis that keep it: cumsum, sort, argsort, and topk,
// which keeps k entries of it. Axes are normalized by check_attrs.
#include "ops/infer_rules.h"

namespace sg::ops::rules {

template <class D>
Status infer_cumsum(const Rule<D>& r) {
  r.set_output(reduction_result_dtype(r.op, r.in[0].dtype), r.in[0].shape);
  return Status::Ok();
}

// sort keeps the values' dtype; argsort gives i64 positions.
template <class D>
Status infer_sort(const Rule<D>& r) {
  r.set_output(r.op == OpId::ArgSort ? DType::kI64 : r.in[0].dtype, r.in[0].shape);
  return Status::Ok();
}

template <class D>
Status infer_topk(const Rule<D>& r) {
  const TensorType<D>& x = r.in[0];
  const size_t axis = size_t(r.attrs.i(attr::kTopKAxis));
  const int64_t k = r.attrs.i(attr::kTopKK);
  // A symbolic axis is checked when the run-time rule sees its size.
  if (std::optional<int64_t> n = dim_static(x.shape[axis]); n && k > *n) {
    return r.error("k = ", std::to_string(k), " is larger than the size ", std::to_string(*n), " of axis ",
                   std::to_string(axis), " of ", r.fmt(x.shape));
  }
  std::vector<D> dims = x.shape;
  dims[axis] = D(k);
  r.out[0] = TensorType<D>{x.dtype, dims};
  r.out[1] = TensorType<D>{DType::kI64, std::move(dims)};
  return Status::Ok();
}

SG_INSTANTIATE_RULE(infer_cumsum)
SG_INSTANTIATE_RULE(infer_sort)
SG_INSTANTIATE_RULE(infer_topk)

}  // namespace sg::ops::rules
