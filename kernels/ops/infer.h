// Dtype and shape rules, written once over the dim type D:
//   D = int64_t  at run time (concrete shapes; the executor and the planner),
//   D = SymDim   at compile time (symbolic dims; the compiler's shape analysis).
// A rule that finds a mismatch returns an error Status whose message names the op
// and the operands' shapes, e.g. "matmul: inner dimensions differ: [2, 3] @ [4, 5]";
// the caller adds the source location. Where only the run-time binding can decide
// (Tri::kUnknown), the compile-time rule accepts and the run-time rule decides.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dim.h"
#include "op_table.h"
#include "stagegraph/dtype.h"
#include "stagegraph/status.h"

namespace sg::ops {

template <class D>
struct TensorType {
  DType dtype = DType::kF32;
  std::vector<D> shape;
  size_t rank() const { return shape.size(); }
  bool operator==(const TensorType&) const = default;
};

// Services a rule may need beyond its operands.
template <class D>
class InferContext {
 public:
  virtual ~InferContext() = default;
  // A dim the rule cannot express from its inputs (a staged slice bound, the
  // length of an arange with staged bounds, ceil(N/2) of a symbolic N). At run
  // time every input is concrete, so rules only call this at compile time.
  virtual D fresh_dim(std::string_view why) = 0;
  // An error-prone pattern (SPEC §8): [N] with [N,1], reduction over a size-1 axis...
  virtual void warn(std::string message) { (void)message; }
  // Formats a shape for messages.
  virtual std::string format(const std::vector<D>& shape) const = 0;
  // Whether a concrete rule may meet a dynamic scalar whose value is not given
  // (see ConcreteInferContext::unknown_scalars); at compile time they always may.
  virtual bool scalars_may_be_unknown() const { return false; }
  // Ops flagged kDataDependentShape: dim `i` of what the kernel reported from its
  // operands' values (kernels::reported_dims), when it has run its count. nullopt
  // otherwise: at compile time the rule asks for a fresh dim; at run time, before
  // the count (the planner), the rule fails and the value is left to the run.
  virtual std::optional<D> reported_dim(size_t i) const {
    (void)i;
    return std::nullopt;
  }
  // True where every dim is a number: always with D = int64_t; with D = SymDim
  // only where a selective build runs its concrete shapes through the symbolic
  // rules (infer.cc), which then behave as the concrete ones.
  virtual bool dims_are_concrete() const { return false; }
};

// Infers the output types of `op` from its attributes, input types and, for ops
// flagged kValueDependentShape, the values of their integer scalar inputs
// (scalars[i] is the value of input i when it is known: always at run time;
// at compile time when static or tied to a dim). `out` is resized to the op's
// number of outputs.
template <class D>
Status infer(OpId op, const Attrs& attrs, std::span<const TensorType<D>> in,
             std::span<const std::optional<D>> scalars, std::vector<TensorType<D>>& out,
             InferContext<D>& ctx);

extern template Status infer<int64_t>(OpId, const Attrs&, std::span<const TensorType<int64_t>>,
                                      std::span<const std::optional<int64_t>>,
                                      std::vector<TensorType<int64_t>>&, InferContext<int64_t>&);
extern template Status infer<SymDim>(OpId, const Attrs&, std::span<const TensorType<SymDim>>,
                                     std::span<const std::optional<SymDim>>,
                                     std::vector<TensorType<SymDim>>&, InferContext<SymDim>&);

// Checks that `attrs` has the op's attributes with the right kinds and valid
// values for the given input ranks (axes in range, perms valid, padding names).
// Used by the runtime's verifier once at load time.
Status check_attrs(OpId op, const Attrs& attrs, std::span<const size_t> input_ranks);

// The run-time context: concrete dims only; fresh_dim is never needed.
class ConcreteInferContext final : public InferContext<int64_t> {
 public:
  // Set by the memory planner: a scalar input whose value is not known yet reads
  // as unknown instead of being an error, so a rule whose output shape does not
  // depend on it (an index drops its axis whatever its value) still gives a shape.
  // A rule that needs the value fails, and the node is left to the run.
  bool unknown_scalars = false;
  bool scalars_may_be_unknown() const override { return unknown_scalars; }
  int64_t fresh_dim(std::string_view) override { return 0; }
  // Set by whoever ran kernels::reported_dims for a kDataDependentShape op.
  std::span<const int64_t> reported;
  std::optional<int64_t> reported_dim(size_t i) const override {
    if (i < reported.size()) return reported[i];
    return std::nullopt;
  }
  std::string format(const std::vector<int64_t>& shape) const override { return shape_to_string(shape); }
};

// Multiply-adds (or comparisons) a straightforward kernel spends on `op` with these
// concrete operand and result types, saturating at UINT64_MAX: the reduced length
// times the output for a matmul, dense layer, convolution or pooling (whose window
// is bounded by the input's plane), the larger of operands and results otherwise.
// The compiler uses it to bound what it evaluates at compile time.
uint64_t op_work(OpId op, std::span<const TensorType<int64_t>> in, std::span<const TensorType<int64_t>> out);

// SPEC §3 helpers shared by the compiler and the eager-mode tests.
// Result dtype of an elementwise binary op on two tensors of dtype `t` (operands
// must already agree; the compiler casts Python scalars first).
DType binary_result_dtype(OpId op, DType t);
DType unary_result_dtype(OpId op, DType t);
DType reduction_result_dtype(OpId op, DType t);

}  // namespace sg::ops
