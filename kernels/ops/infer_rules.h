// Internal to sg_ops: the per-family shape rules that infer() dispatches to, and
// the helpers they share. Each rule file instantiates its rules for both dim types.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ops/infer.h"

namespace sg::ops::rules {

// runtime_error("name: " + the parts); Rule::error's one out-of-line body.
Status rule_error(const char* name, std::initializer_list<std::string_view> parts);

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
  // A shape, dtype or index error: "name: " and the parts of the message, joined
  // out of line (rule_error): each failure path passes pointers, not a chain of
  // std::string additions.
  template <class... Parts>
  Status error(const Parts&... parts) const {
    return rule_error(name(), {std::string_view(parts)...});
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

// SPEC §8's warnings are the compiler's. A selective build's op table is the
// runtime's (its graph-compile knows only the selected ops: compile graphs with a
// full build), whose contexts discard them, so there the warnings and the checks
// that find them are compiled out (SG_RULES_WITHOUT_WARNINGS, kernels/CMakeLists.txt).
// Errors are the same in every build.
#ifdef SG_RULES_WITHOUT_WARNINGS
inline constexpr bool kRuleWarnings = false;
#else
inline constexpr bool kRuleWarnings = true;
#endif

// Whether this invocation has concrete dims: at run time (D = int64_t, or SymDim
// constants in a selective build: InferContext::dims_are_concrete).
template <class D>
bool concrete(const Rule<D>& r) {
  if constexpr (kConcrete<D>) return true;
  else return r.ctx.dims_are_concrete();
}

// ---- SPEC §8: dims that no binding of their symbols can make agree ---------------
// A rule checks them at run time (there they are an error naming the op); at
// compile time, where dim_equal can only say kUnknown, it warns with these.

// The symbols of `dims` by name: "N", "N and M", "N, M and K".
template <class D>
std::string symbols_text(const Rule<D>& r, std::initializer_list<D> dims) {
  if constexpr (kConcrete<D>) {
    return "binding";
  } else {
    if (concrete(r)) return "binding";
    std::vector<int32_t> ids;
    for (const D& d : dims) {
      for (const SymDim::Term& t : d.terms()) {
        for (int32_t id : t.symbols)
          if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
      }
    }
    std::string s;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i > 0) s += i + 1 == ids.size() ? " and " : ", ";
      s += dim_text(r, SymDim::symbol(ids[i]));
    }
    return s;
  }
}

// The end of such a warning: " for any N, so this fails at run time for every input".
template <class D>
std::string fails_for_every_input(const Rule<D>& r, std::initializer_list<D> dims) {
  return " for any " + symbols_text(r, dims) + ", so this fails at run time for every input";
}

// "N*2 can be neither 5 nor 1 for any N, so this fails at run time for every input".
template <class D>
std::string neither_text(const Rule<D>& r, const D& d, const D& target) {
  return dim_text(r, d) + " can be neither " + dim_text(r, target) + " nor 1" + fails_for_every_input(r, {d, target});
}

// A dim `d` that must be 1 or `target` (broadcast_to, a layer_norm parameter, a
// value stored into a slice) and can be neither: the text for the warning.
template <class D>
std::optional<std::string> never_one_or(const Rule<D>& r, const D& d, const D& target) {
  if (dim_equal(d, target) != Tri::kUnknown || !dim_never_equal(d, target) || !dim_never_equal(d, D(1)))
    return std::nullopt;
  return neither_text(r, d, target);
}

// Two operand dims of a broadcast (equal, or one of them 1) that can be neither:
// the text for the warning. Static pairs that differ are broadcast_shapes' errors;
// this only looks at pairs that involve a symbol.
template <class D>
std::optional<std::string> never_broadcast(const Rule<D>& r, const D& a, const D& b) {
  if (dim_static(a) && dim_static(b)) return std::nullopt;
  if (!dim_never_equal(a, b) || !dim_never_equal(a, D(1)) || !dim_never_equal(b, D(1))) return std::nullopt;
  if (dim_static(a)) return neither_text(r, b, a);
  if (dim_static(b)) return neither_text(r, a, b);
  return dim_text(r, a) + " and " + dim_text(r, b) + " cannot be equal, and neither can be 1," +
         fails_for_every_input(r, {a, b});
}

// The first pair of operand dims along one axis of `shapes` (aligned at the right)
// that never_broadcast finds, as its text.
template <class D>
std::optional<std::string> never_broadcast(const Rule<D>& r, std::span<const std::vector<D>* const> shapes) {
  size_t rank = 0;
  for (const std::vector<D>* s : shapes) rank = std::max(rank, s->size());
  for (size_t k = 0; k < rank; ++k) {  // k counts from the right
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (k >= shapes[i]->size()) continue;
      for (size_t j = i + 1; j < shapes.size(); ++j) {
        if (k >= shapes[j]->size()) continue;
        const D& a = (*shapes[i])[shapes[i]->size() - 1 - k];
        const D& b = (*shapes[j])[shapes[j]->size() - 1 - k];
        if (std::optional<std::string> why = never_broadcast(r, a, b)) return why;
      }
    }
  }
  return std::nullopt;
}

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
  if (concrete(r)) {
    return internal_error(std::string(r.name()) + ": a dim is unknown at run time (" +
                          std::string(why) + ")");
  }
  return r.ctx.fresh_dim(why);
}

// Concrete shapes through the SymDim rules, as SymDim constants: what infer<int64_t>
// is in a selective build, whose verifier needs the SymDim rules anyway (one
// instantiation of the selected ops' rules is about half the size of two). Each
// rule then gives its int64_t instantiation's answer and error (concrete() above);
// the full build keeps that instantiation, which allocates no polynomials, for the
// planner and the executor's dynamic shapes. The rule tests (run_both) compare the
// two on every case.
Status infer_through_symbolic(OpId op, const Attrs& attrs, std::span<const TensorType<int64_t>> in,
                              std::span<const std::optional<int64_t>> scalars,
                              std::vector<TensorType<int64_t>>& out, InferContext<int64_t>& ctx);

// The target shape of reshape, broadcast_to, full and random (infer_shape.cc):
// entries >= 0 as given, -2 from the dynamic scalar inputs 1, 2, ... in order, -1
// left as a marker whose position is returned in `infer_pos`.
template <class D>
Status resolve_target(const Rule<D>& r, std::vector<D>& dims, std::optional<size_t>& infer_pos);

// The rules by family, each in infer_<family>.cc (op_families.h); infer.cc
// dispatches on the op.
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
template <class D> Status infer_random(const Rule<D>& r);
template <class D> Status infer_custom(const Rule<D>& r);
template <class D> Status infer_transpose(const Rule<D>& r);
template <class D> Status infer_expand_dims(const Rule<D>& r);
template <class D> Status infer_squeeze(const Rule<D>& r);
template <class D> Status infer_concatenate(const Rule<D>& r);
template <class D> Status infer_take(const Rule<D>& r);
template <class D> Status infer_scatter_add(const Rule<D>& r);
template <class D> Status infer_scatter(const Rule<D>& r);
template <class D> Status infer_flat_nonzero(const Rule<D>& r);
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
template <class D> Status infer_searchsorted(const Rule<D>& r);
template <class D> Status infer_tile(const Rule<D>& r);
template <class D> Status infer_pad(const Rule<D>& r);
template <class D> Status infer_eye(const Rule<D>& r);
template <class D> Status infer_arange(const Rule<D>& r);
template <class D> Status infer_one_hot(const Rule<D>& r);
template <class D> Status infer_fully_connected(const Rule<D>& r);
template <class D> Status infer_conv2d_bias(const Rule<D>& r);
template <class D> Status infer_elementwise_chain(const Rule<D>& r);
// sg.linalg (infer_linalg.cc): inv and cholesky, solve and triangular_solve.
template <class D> Status infer_square(const Rule<D>& r);
template <class D> Status infer_solve(const Rule<D>& r);
template <class D> Status infer_slogdet(const Rule<D>& r);
template <class D> Status infer_qr(const Rule<D>& r);
template <class D> Status infer_eigh(const Rule<D>& r);

// Dtype validity (the result dtypes themselves are the public *_result_dtype).
Status check_binary_dtype(OpId op, DType t);
Status check_unary_dtype(OpId op, DType t);

}  // namespace sg::ops::rules

#define SG_INSTANTIATE_RULE(fn)                                   \
  template ::sg::Status fn<int64_t>(const Rule<int64_t>&);        \
  template ::sg::Status fn<::sg::ops::SymDim>(const Rule<::sg::ops::SymDim>&);
