// searchsorted's rule: a sorted 1-D sequence and values of its dtype give one i64
// position per value. (cumprod shares cumsum's rule, infer_ordering.cc.)
#include "ops/infer_rules.h"

namespace sg::ops::rules {

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

SG_INSTANTIATE_RULE(infer_searchsorted)

}  // namespace sg::ops::rules
