// Internal to sg_ops: the per-family shape rules that infer() dispatches to, and
// the helpers they share. Each rule file instantiates its rules for both dim types.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/infer.h"

namespace sg::ops::rules {

// One rule invocation. `out` is already sized to the op's outputs.
template <class D>
struct Rule {
  OpId op;
  const Attrs& attrs;
  std::span<const TensorType<D>> in;
  std::span<const std::optional<D>> scalars;
  std::vector<TensorType<D>>& out;
  InferContext<D>& ctx;

  const char* name() const { return op_def(op).name; }
  std::string fmt(const std::vector<D>& shape) const { return ctx.format(shape); }
  // A shape, dtype or index error: "name: message".
  Status error(const std::string& message) const {
    return runtime_error(std::string(name()) + ": " + message);
  }
  void set_output(DType dtype, std::vector<D> shape) const {
    out[0] = TensorType<D>{dtype, std::move(shape)};
  }
};

// A dim as text, e.g. an element count "N*288".
template <class D>
std::string dim_text(const Rule<D>& r, const D& d) {
  const std::string s = r.fmt({d});
  return s.substr(1, s.size() - 2);
}

template <class D>
inline constexpr bool kConcrete = std::is_same_v<D, int64_t>;

// True when `d` cannot be negative for any binding of its symbols (dims are >= 0):
// a non-negative constant and non-negative coefficients.
inline bool known_nonnegative(int64_t d) { return d >= 0; }
inline bool known_nonnegative(const SymDim& d) {
  if (d.constant() < 0) return false;
  for (const SymDim::Term& t : d.terms())
    if (t.coef < 0) return false;
  return true;
}

template <class D>
bool is_static_value(const D& d, int64_t v) {
  std::optional<int64_t> s = dim_static(d);
  return s && *s == v;
}

// NumPy broadcasting of `shapes` (aligned at the right) into `result`. Returns
// false when two dims are known to differ and neither is 1. Where only the
// binding can tell (N against M, N against 3) it accepts: a static side wins
// (it is the result for every valid binding), else the first symbolic one.
template <class D>
bool broadcast_shapes(std::span<const std::vector<D>* const> shapes, std::vector<D>& result);

// The value of dynamic scalar input `input` (an i32/i64 0-d tensor). nullopt at
// compile time when the value is not known; an error at run time if it is missing.
template <class D>
Result<std::optional<D>> dynamic_scalar(const Rule<D>& r, size_t input);

// A dim the rule cannot express; at run time every value is known, so reaching
// this with concrete dims is a broken invariant.
template <class D>
Result<D> unknown_dim(const Rule<D>& r, std::string_view why) {
  if constexpr (kConcrete<D>) {
    return internal_error(std::string(r.name()) + ": a dim is unknown at run time (" +
                          std::string(why) + ")");
  } else {
    return r.ctx.fresh_dim(why);
  }
}

// Family rules (infer.cc dispatches on the op).
template <class D> Status infer_binary(const Rule<D>& r);
template <class D> Status infer_unary(const Rule<D>& r);
template <class D> Status infer_where(const Rule<D>& r);
template <class D> Status infer_clip(const Rule<D>& r);
template <class D> Status infer_cast(const Rule<D>& r);
template <class D> Status infer_reduce(const Rule<D>& r);
template <class D> Status infer_arg_reduce(const Rule<D>& r);
template <class D> Status infer_matmul(const Rule<D>& r);
template <class D> Status infer_reshape(const Rule<D>& r);
template <class D> Status infer_broadcast_to(const Rule<D>& r);
template <class D> Status infer_full(const Rule<D>& r);
template <class D> Status infer_transpose(const Rule<D>& r);
template <class D> Status infer_expand_dims(const Rule<D>& r);
template <class D> Status infer_squeeze(const Rule<D>& r);
template <class D> Status infer_concatenate(const Rule<D>& r);
template <class D> Status infer_take(const Rule<D>& r);
template <class D> Status infer_shape_dim(const Rule<D>& r);
template <class D> Status infer_slice(const Rule<D>& r);
template <class D> Status infer_softmax(const Rule<D>& r);
template <class D> Status infer_conv2d(const Rule<D>& r);
template <class D> Status infer_pool2d(const Rule<D>& r);
template <class D> Status infer_layer_norm(const Rule<D>& r);
template <class D> Status infer_slice_update(const Rule<D>& r);
template <class D> Status infer_cumsum(const Rule<D>& r);
template <class D> Status infer_sort(const Rule<D>& r);
template <class D> Status infer_topk(const Rule<D>& r);
template <class D> Status infer_tile(const Rule<D>& r);
template <class D> Status infer_pad(const Rule<D>& r);
template <class D> Status infer_eye(const Rule<D>& r);
template <class D> Status infer_arange(const Rule<D>& r);
template <class D> Status infer_one_hot(const Rule<D>& r);
template <class D> Status infer_fully_connected(const Rule<D>& r);
template <class D> Status infer_conv2d_bias(const Rule<D>& r);

// Dtype validity (the result dtypes themselves are the public *_result_dtype).
Status check_binary_dtype(OpId op, DType t);
Status check_unary_dtype(OpId op, DType t);

}  // namespace sg::ops::rules

#define SG_INSTANTIATE_RULE(fn)                                   \
  template ::sg::Status fn<int64_t>(const Rule<int64_t>&);        \
  template ::sg::Status fn<::sg::ops::SymDim>(const Rule<::sg::ops::SymDim>&);
