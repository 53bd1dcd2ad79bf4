// OpId -> reference kernel. The switch names every op, so -Wswitch reports an op
// added to the table without a kernel; the count below makes that a hard error.
#include "reference/kernel.h"
#include "reference/reference_kernels.h"

namespace sg::kernels {
namespace {

static_assert(ops::kNumOps == 82, "an op was added or removed: route it in family_kernel()");

Status unknown_op(const KernelContext&, const ops::Attrs&, std::span<const TensorRef>,
                  std::span<TensorRef>) {
  return internal_error("no reference kernel for this op id");
}

// A custom op's kernel is the application's (the runtime's CustomOps, checked when a
// Session is created); the table has none, and the compiler never folds one.
Status unregistered_custom(const KernelContext&, const ops::Attrs&, std::span<const TensorRef>, std::span<TensorRef>) {
  return internal_error("custom: a custom op runs the kernel its application registers (stagegraph/custom_op.h)");
}

KernelFn family_kernel(ops::OpId op) {
  using ops::OpId;
  switch (op) {
    case OpId::Add: case OpId::Sub: case OpId::Mul: case OpId::Div: case OpId::FloorDiv:
    case OpId::Mod: case OpId::Pow: case OpId::Maximum: case OpId::Minimum: case OpId::Less:
    case OpId::LessEqual: case OpId::Greater: case OpId::GreaterEqual: case OpId::Equal:
    case OpId::NotEqual: case OpId::LogicalAnd: case OpId::LogicalOr:
      return elementwise_binary_kernel(op);
    case OpId::Neg: case OpId::Abs: case OpId::Exp: case OpId::Log: case OpId::Sqrt:
    case OpId::Rsqrt: case OpId::Sin: case OpId::Cos: case OpId::Tanh: case OpId::Sigmoid:
    case OpId::Relu: case OpId::Gelu: case OpId::Floor: case OpId::Ceil: case OpId::Round:
    case OpId::Sign: case OpId::Square: case OpId::LogicalNot: case OpId::IsNan:
      return elementwise_unary_kernel(op);
    case OpId::Where: case OpId::Clip:
      return select_kernel(op);
    case OpId::Cast: case OpId::Full: case OpId::ShapeDim:
      return cast_full_kernel(op);
    case OpId::Sum: case OpId::Mean: case OpId::Max: case OpId::Min: case OpId::Prod:
    case OpId::Any: case OpId::All: case OpId::ArgMax: case OpId::ArgMin:
      return reduction_kernel(op);
    case OpId::MatMul:
      return matmul_kernel(op);
    case OpId::Reshape: case OpId::BroadcastTo: case OpId::Transpose: case OpId::ExpandDims:
    case OpId::Squeeze: case OpId::Concatenate:
      return shape_kernel(op);
    case OpId::Slice: case OpId::Take:
      return slice_take_kernel(op);
    case OpId::Softmax: case OpId::LogSoftmax:
      return softmax_kernel(op);
    case OpId::Conv2D: case OpId::MaxPool2D: case OpId::AvgPool2D:
      return conv_pool_kernel(op);
    case OpId::CumSum: case OpId::Sort: case OpId::ArgSort: case OpId::TopK:
      return ordering_kernel(op);
    case OpId::Tile: case OpId::Pad:
      return tile_pad_kernel(op);
    case OpId::Eye: case OpId::Arange: case OpId::OneHot:
      return creation_kernel(op);
    case OpId::LayerNorm:
      return layer_norm_kernel(op);
    case OpId::SliceUpdate:
      return slice_take_kernel(op);
    case OpId::Print: case OpId::Assert:
      return effect_kernel(op);
    case OpId::FullyConnected: case OpId::Conv2DBias: case OpId::ElementwiseChain:
      return fused_kernel(op);
    case OpId::Random:
      return random_kernel_of(op);
    case OpId::Custom:
      return &unregistered_custom;
  }
  return nullptr;
}

}  // namespace

KernelFn reference_kernel(ops::OpId op) {
  const KernelFn fn = family_kernel(op);
  return fn ? fn : &unknown_op;
}

// Only the ordering kernels need scratch (their index buffers); every other
// reference kernel works in its outputs and on the stack.
size_t reference_scratch_size(ops::OpId op, const ops::Attrs& attrs, std::span<const TensorRef> inputs) {
  return ordering_scratch_size(op, attrs, inputs);
}

}  // namespace sg::kernels
