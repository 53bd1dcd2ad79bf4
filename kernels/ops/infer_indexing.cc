// Shape rules of the indexing ops that item assignment and boolean selection
// lower to: scatter (x[idx] = v) and flat_nonzero (x[mask], sg.nonzero), whose
// length is a dim known only when it runs.
#include "ops/infer_rules.h"

namespace sg::ops::rules {

// scatter(x, idx, updates): x's type; updates have take's layout
// x.shape[:axis] + idx.shape + x.shape[axis+1:] (the compiler broadcasts them).
template <class D>
Status infer_scatter(const Rule<D>& r) {
  const size_t axis = size_t(r.attrs.i(attr::kAxisValue));
  const TensorType<D>& x = r.in[0];
  const TensorType<D>& idx = r.in[1];
  const TensorType<D>& upd = r.in[2];
  if (!is_int(idx.dtype)) return r.error("indices must be i32 or i64, got ", dtype_name(idx.dtype));
  if (upd.dtype != x.dtype)
    return r.error("updates are ", dtype_name(upd.dtype), ", the target ", dtype_name(x.dtype));
  std::vector<D> dims(x.shape.begin(), x.shape.begin() + ptrdiff_t(axis));
  dims.insert(dims.end(), idx.shape.begin(), idx.shape.end());
  dims.insert(dims.end(), x.shape.begin() + ptrdiff_t(axis) + 1, x.shape.end());
  if (dims.size() != upd.shape.size())
    return r.error("updates ", r.fmt(upd.shape), " do not have the indexed shape ", r.fmt(dims));
  for (size_t i = 0; i < dims.size(); ++i)
    if (dim_equal(dims[i], upd.shape[i]) == Tri::kNo)
      return r.error("updates ", r.fmt(upd.shape), " do not have the indexed shape ", r.fmt(dims));
  r.set_output(x.dtype, x.shape);
  return Status::Ok();
}

// flat_nonzero(x) -> i64[count]: count is what the kernel reported, or at compile
// time a fresh dim ("nonzero count"); before the kernel ran (the planner) the rule
// fails, so the value is made when the node runs.
template <class D>
Status infer_flat_nonzero(const Rule<D>& r) {
  std::optional<D> count = r.ctx.reported_dim(0);
  if (!count) {
    if (concrete(r)) return r.error("its length is known only when it runs");
    count = r.ctx.fresh_dim("the number of nonzero elements, known only when it runs");
  }
  r.set_output(DType::kI64, {*count});
  return Status::Ok();
}

SG_INSTANTIATE_RULE(infer_scatter)
SG_INSTANTIATE_RULE(infer_flat_nonzero)

}  // namespace sg::ops::rules
