// OpId -> reference kernel. The switch names every op, so -Wswitch reports an op
// added to the table without a kernel; the count below makes that a hard error.
// Each family function lives in the file of its ops' family (op_families.h):
// reference/<family>.cc, or a part of it, <family>_<part>.cc.
#include "interface/kernel.h"
#include "reference/reference_kernels.h"
#include "reference/scalar_binary.h"
#include "selection/selected_ops.h"

namespace sg::kernels {
namespace {

static_assert(ops::kNumOps == 94, "an op was added or removed: route it in family_kernel()");

Status unknown_op(const KernelContext&, const ops::Attrs&, std::span<const TensorRef>,
                  std::span<TensorRef>) {
  return internal_error("no reference kernel for this op id");
}

// A custom op's kernel is the application's (the runtime's CustomOps, checked when a
// Session is created); the table has none, and the compiler never folds one.
Status unregistered_custom(const KernelContext&, const ops::Attrs&, std::span<const TensorRef>, std::span<TensorRef>) {
  return internal_error("custom: a custom op runs the kernel its application registers (stagegraph/custom_op.h)");
}

// The kernel of `family(op)` when some op of that family is selected (see
// selected_ops.h); otherwise the family is not named here at all, and its code is
// left out of the link.
#define SG_ROUTE(family, ...)                                                     \
  do {                                                                            \
    if constexpr (selection::any_of<__VA_ARGS__>()) return family(op);            \
    else return nullptr;                                                          \
  } while (0)

KernelFn family_kernel(ops::OpId op) {
  using ops::OpId;
  switch (op) {
    case OpId::Add: case OpId::Sub: case OpId::Mul: case OpId::Div: case OpId::FloorDiv:
    case OpId::Mod: case OpId::Pow: case OpId::Maximum: case OpId::Minimum: case OpId::Less:
    case OpId::LessEqual: case OpId::Greater: case OpId::GreaterEqual: case OpId::Equal:
    case OpId::NotEqual: case OpId::LogicalAnd: case OpId::LogicalOr:
      SG_ROUTE(elementwise_binary_kernel, OpId::Add, OpId::Sub, OpId::Mul, OpId::Div, OpId::FloorDiv,
               OpId::Mod, OpId::Pow, OpId::Maximum, OpId::Minimum, OpId::Less, OpId::LessEqual,
               OpId::Greater, OpId::GreaterEqual, OpId::Equal, OpId::NotEqual, OpId::LogicalAnd,
               OpId::LogicalOr);
    case OpId::Neg: case OpId::Abs: case OpId::Exp: case OpId::Log: case OpId::Sqrt:
    case OpId::Rsqrt: case OpId::Sin: case OpId::Cos: case OpId::Tanh: case OpId::Sigmoid:
    case OpId::Relu: case OpId::Gelu: case OpId::Floor: case OpId::Ceil: case OpId::Round:
    case OpId::Sign: case OpId::Square: case OpId::LogicalNot: case OpId::IsNan:
      SG_ROUTE(elementwise_unary_kernel, OpId::Neg, OpId::Abs, OpId::Exp, OpId::Log, OpId::Sqrt,
               OpId::Rsqrt, OpId::Sin, OpId::Cos, OpId::Tanh, OpId::Sigmoid, OpId::Relu, OpId::Gelu,
               OpId::Floor, OpId::Ceil, OpId::Round, OpId::Sign, OpId::Square, OpId::LogicalNot,
               OpId::IsNan);
    case OpId::Where: case OpId::Clip:
      SG_ROUTE(select_kernel, OpId::Where, OpId::Clip);
    case OpId::Cast:
      SG_ROUTE(cast_op_kernel, OpId::Cast);
    case OpId::Sum: case OpId::Mean: case OpId::Max: case OpId::Min: case OpId::Prod:
    case OpId::Any: case OpId::All: case OpId::ArgMax: case OpId::ArgMin:
      SG_ROUTE(reduction_kernel, OpId::Sum, OpId::Mean, OpId::Max, OpId::Min, OpId::Prod, OpId::Any,
               OpId::All, OpId::ArgMax, OpId::ArgMin);
    case OpId::MatMul:
      SG_ROUTE(matmul_kernel, OpId::MatMul);
    case OpId::Reshape: case OpId::BroadcastTo: case OpId::Transpose: case OpId::ExpandDims:
    case OpId::Squeeze: case OpId::Concatenate: case OpId::ShapeDim:
      SG_ROUTE(shape_kernel, OpId::Reshape, OpId::BroadcastTo, OpId::Transpose, OpId::ExpandDims,
               OpId::Squeeze, OpId::Concatenate, OpId::ShapeDim);
    case OpId::Slice: case OpId::Take: case OpId::SliceUpdate: case OpId::ScatterAdd:
      SG_ROUTE(slice_take_kernel, OpId::Slice, OpId::Take, OpId::SliceUpdate, OpId::ScatterAdd);
    case OpId::Softmax: case OpId::LogSoftmax:
      SG_ROUTE(softmax_kernel, OpId::Softmax, OpId::LogSoftmax);
    case OpId::Conv2D: case OpId::MaxPool2D: case OpId::AvgPool2D:
      SG_ROUTE(conv_pool_kernel, OpId::Conv2D, OpId::MaxPool2D, OpId::AvgPool2D);
    case OpId::CumSum: case OpId::Sort: case OpId::ArgSort: case OpId::TopK:
      SG_ROUTE(ordering_kernel, OpId::CumSum, OpId::Sort, OpId::ArgSort, OpId::TopK);
    case OpId::Tile: case OpId::Pad:
      SG_ROUTE(tile_pad_kernel, OpId::Tile, OpId::Pad);
    case OpId::Full: case OpId::Eye: case OpId::Arange: case OpId::OneHot:
      SG_ROUTE(creation_kernel, OpId::Full, OpId::Eye, OpId::Arange, OpId::OneHot);
    case OpId::LayerNorm:
      SG_ROUTE(layer_norm_kernel, OpId::LayerNorm);
    case OpId::Print: case OpId::Assert:
      SG_ROUTE(effect_kernel, OpId::Print, OpId::Assert);
    case OpId::FullyConnected: case OpId::Conv2DBias: case OpId::ElementwiseChain:
      SG_ROUTE(fused_kernel, OpId::FullyConnected, OpId::Conv2DBias, OpId::ElementwiseChain);
    case OpId::Random:
      SG_ROUTE(random_kernel_of, OpId::Random);
    case OpId::Custom:
      return &unregistered_custom;
    case OpId::CumProd: case OpId::SearchSorted:
      SG_ROUTE(scan_search_kernel, OpId::CumProd, OpId::SearchSorted);
    case OpId::Scatter: case OpId::FlatNonzero:
      SG_ROUTE(scatter_nonzero_kernel, OpId::Scatter, OpId::FlatNonzero);
    case OpId::Inv: case OpId::Solve: case OpId::Slogdet: case OpId::Cholesky:
    case OpId::TriangularSolve: case OpId::Qr: case OpId::Eigh:
      SG_ROUTE(linalg_kernel, OpId::Inv, OpId::Solve, OpId::Slogdet, OpId::Cholesky, OpId::TriangularSolve,
               OpId::Qr, OpId::Eigh);
  }
  return nullptr;
}

#undef SG_ROUTE

}  // namespace

bool op_available(ops::OpId op) { return selection::selected(op); }

KernelFn reference_kernel(ops::OpId op) {
  const KernelFn fn = selection::selected(op) ? family_kernel(op) : nullptr;
  return fn ? fn : &unknown_op;
}

// Rank-0 elementwise binary kernels (elementwise_binary.cc), routed like the rest.
// A selective build has none: its rank-0 nodes run the op's kernel (one element, the
// same value), which saves a kernel per op and dtype pair at the cost of the
// broadcast plan per run.
KernelFn scalar_binary_kernel(ops::OpId op, DType in, DType out) {
  if constexpr (selection::kAllOps) {
    return selection::selected(op) ? scalar_binary_kernel_of(op, in, out) : nullptr;
  } else {
    (void)op, (void)in, (void)out;
    return nullptr;
  }
}

FixedFn scalar_binary_fixed(ops::OpId op, DType in, DType out) {
  if constexpr (selection::kAllOps) {
    return selection::selected(op) ? scalar_binary_fixed_of(op, in, out) : nullptr;
  } else {
    (void)op, (void)in, (void)out;
    return nullptr;
  }
}

Status reported_dims(ops::OpId op, const ops::Attrs&, std::span<const TensorRef> inputs, std::vector<int64_t>& dims) {
  dims.clear();
  if constexpr (selection::any_of<ops::OpId::FlatNonzero>()) {
    if (op == ops::OpId::FlatNonzero) return scatter_nonzero_reported_dims(op, inputs, dims);
  }
  return internal_error(std::string("op '") + ops::op_def(op).name + "' reports no dims");
}

// Only the ordering kernels (their index buffers) and the linalg ones (a matrix in
// double) need scratch; every other reference kernel works in its outputs and on the stack.
size_t reference_scratch_size(ops::OpId op, const ops::Attrs& attrs, std::span<const TensorRef> inputs) {
  using ops::OpId;
  if constexpr (selection::any_of<OpId::Inv, OpId::Solve, OpId::Slogdet, OpId::Cholesky, OpId::TriangularSolve,
                                  OpId::Qr, OpId::Eigh>()) {
    if (const size_t n = linalg_scratch_size(op, inputs)) return n;
  }
  if constexpr (selection::any_of<OpId::CumSum, OpId::Sort, OpId::ArgSort, OpId::TopK>()) {
    return ordering_scratch_size(op, attrs, inputs);
  } else {
    (void)op, (void)attrs, (void)inputs;
    return 0;
  }
}

}  // namespace sg::kernels
