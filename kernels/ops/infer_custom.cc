// The rule of custom (sg.custom_op): the dtype and shape the compiler recorded.
#include "ops/infer_rules.h"

namespace sg::ops::rules {

// custom(operands..., dims...): the dtype and shape the compiler recorded; the
// dynamic dims are the inputs after the operands.
template <class D>
Status infer_custom(const Rule<D>& r) {
  size_t next_input = size_t(r.attrs.i(attr::kCustomOperands));
  std::vector<D> dims;
  for (int64_t entry : r.attrs.ints(attr::kCustomShape)) {
    if (entry != attr::kDynamicDim) {
      dims.push_back(D(entry));
      continue;
    }
    SG_ASSIGN_OR_RETURN(std::optional<D> value, dynamic_scalar(r, next_input++));
    D d = D(0);
    if (value) {
      d = *value;
    } else {
      SG_ASSIGN_OR_RETURN(d, unknown_dim(r, "a dim given by a staged value"));
    }
    if (std::optional<int64_t> s = dim_static(d); s && *s < 0)
      return r.error("dimension ", std::to_string(*s), " is negative");
    dims.push_back(std::move(d));
  }
  r.set_output(DType(r.attrs.i(attr::kCustomDType)), std::move(dims));
  return Status::Ok();
}

SG_INSTANTIATE_RULE(infer_custom)

}  // namespace sg::ops::rules
