// Rules of the reductions: sum mean max min prod any all (a list of axes) and
// argmax argmin (one axis, i64 result).
#include "ops/infer_rules.h"

namespace sg::ops::rules {
namespace {

bool needs_nonempty_axis(OpId op) {
  return op == OpId::Max || op == OpId::Min || op == OpId::ArgMax || op == OpId::ArgMin;
}

// Axes are normalized by check_attrs (in range, sorted, unique).
template <class D>
Status reduce_axes(const Rule<D>& r, const std::vector<int64_t>& axes, bool keepdims, DType dtype) {
  const std::vector<D>& shape = r.in[0].shape;
  if (needs_nonempty_axis(r.op)) {
    for (int64_t a : axes) {
      if (is_static_value(shape[size_t(a)], 0)) {
        return r.error("zero-size reduction axis ", std::to_string(a), " of ", r.fmt(shape), " has no identity");
      }
    }
  }
  // Warn only when nothing is reduced at all: sum(x) over [1, 10] is fine.
  bool all_size_one = !axes.empty();
  for (int64_t a : axes) all_size_one = all_size_one && is_static_value(shape[size_t(a)], 1);
  if (kRuleWarnings && all_size_one) {
    const std::string name = r.name();
    if (r.op == OpId::ArgMax || r.op == OpId::ArgMin) {
      r.ctx.warn(name + " over an axis of size 1 always gives 0 (input " + r.fmt(shape) + ")");
    } else {
      r.ctx.warn(name + " over an axis of size 1 does nothing; did you mean another axis? (input " +
                 r.fmt(shape) + ")");
    }
  }
  std::vector<D> result;
  size_t next = 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    const bool reduced = next < axes.size() && size_t(axes[next]) == i;
    if (!reduced) {
      result.push_back(shape[i]);
      continue;
    }
    ++next;
    if (keepdims) result.push_back(D(1));
  }
  r.set_output(dtype, std::move(result));
  return Status::Ok();
}

}  // namespace

template <class D>
Status infer_reduce(const Rule<D>& r) {
  return reduce_axes(r, r.attrs.ints(attr::kReduceAxes), r.attrs.i(attr::kReduceKeepdims) != 0,
                     reduction_result_dtype(r.op, r.in[0].dtype));
}

template <class D>
Status infer_arg_reduce(const Rule<D>& r) {
  return reduce_axes(r, {r.attrs.i(attr::kArgAxis)}, r.attrs.i(attr::kArgKeepdims) != 0, DType::kI64);
}

SG_INSTANTIATE_RULE(infer_reduce)
SG_INSTANTIATE_RULE(infer_arg_reduce)

}  // namespace sg::ops::rules
