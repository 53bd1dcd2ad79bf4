// Rules of the ordering family, the ops along one axis: cumsum and cumprod, sort,
// argsort, topk (which keeps k entries of it), and searchsorted, whose sorted
// 1-D sequence and values give one position per value. Axes are normalized by
// check_attrs.
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

template <class D>
Status infer_searchsorted(const Rule<D>& r) {
  const TensorType<D>& a = r.in[0];
  const TensorType<D>& v = r.in[1];
  if (a.rank() != 1) return r.error("the sorted sequence must be 1-D, got ", r.fmt(a.shape));
  if (a.dtype != v.dtype)
    return r.error("the values are ", dtype_name(v.dtype), " and the sequence ", dtype_name(a.dtype),
                   "; cast with astype");
  r.set_output(DType::kI64, v.shape);
  return Status::Ok();
}

SG_INSTANTIATE_RULE(infer_cumsum)
SG_INSTANTIATE_RULE(infer_sort)
SG_INSTANTIATE_RULE(infer_topk)
SG_INSTANTIATE_RULE(infer_searchsorted)

}  // namespace sg::ops::rules
