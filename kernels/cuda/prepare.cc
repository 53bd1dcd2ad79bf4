// Which nodes the GPU runs, and the prepared kernel that runs them.
#include <memory>
#include <string>

#include "cuda/cuda_backend.h"
#include "cuda/kernels.h"

namespace sg::kernels::cuda {
namespace {

using ops::OpId;

bool all_f32(std::span<const InputInfo> in) {
  for (const InputInfo& i : in)
    if (i.dtype != DType::kF32) return false;
  return true;
}

class NodeKernel final : public Kernel {
 public:
  NodeKernel(OpId op, ops::Attrs attrs, const char* name) : op_(op), attrs_(std::move(attrs)), name_(name) {}

  Status run(Context& ctx, std::span<const TensorRef> in, std::span<TensorRef> out) override {
    using namespace ops::attr;
    TensorRef& o = out[0];
    if (ops::has_flag(op_, ops::kElementwiseBinary)) return run_binary(ctx, op_, in[0], in[1], o);
    if (ops::has_flag(op_, ops::kElementwiseUnary)) return run_unary(ctx, op_, in[0], o);
    switch (op_) {
      case OpId::Where: return run_where(ctx, in[0], in[1], in[2], o);
      case OpId::ElementwiseChain: return run_chain(ctx, attrs_, in, o);
      case OpId::Sum: case OpId::Mean: case OpId::Max: case OpId::Min:
        return run_reduce(ctx, op_, attrs_, in[0], o);
      case OpId::ArgMax: case OpId::ArgMin: return run_arg_reduce(ctx, op_, attrs_, in[0], o);
      case OpId::Softmax: return run_softmax(ctx, false, int(attrs_.i(kAxisValue)), in[0], o);
      case OpId::LogSoftmax: return run_softmax(ctx, true, int(attrs_.i(kAxisValue)), in[0], o);
      case OpId::LayerNorm: return run_layer_norm(ctx, attrs_.f(kLayerNormEps), in[0], in[1], in[2], o);
      case OpId::CumSum: return run_cumsum(ctx, int(attrs_.i(kAxisValue)), in[0], o);
      case OpId::MatMul: return gemm_.run(ctx, in[0], in[1], nullptr, kActNone, o);
      case OpId::FullyConnected: return gemm_.run(ctx, in[0], in[1], &in[2], attrs_.i(kFcActivation), o);
      case OpId::Transpose: return run_transpose(ctx, attrs_.ints(kPermAxes), in[0], o);
      case OpId::Take: return run_take(ctx, int(attrs_.i(kAxisValue)), in[0], in[1], o);
      case OpId::Concatenate: return run_concatenate(ctx, int(attrs_.i(kAxisValue)), in, o);
      case OpId::Reshape: case OpId::Squeeze: case OpId::ExpandDims: return run_copy(ctx, in[0], o);
      case OpId::Conv2D: return run_conv2d(ctx, attrs_, in[0], in[1], nullptr, kActNone, o);
      case OpId::Conv2DBias: return run_conv2d(ctx, attrs_, in[0], in[1], &in[2], attrs_.i(kConvActivation), o);
      case OpId::MaxPool2D: return run_pool(ctx, true, attrs_, in[0], o);
      case OpId::AvgPool2D: return run_pool(ctx, false, attrs_, in[0], o);
      default: return internal_error(std::string("cuda: no kernel for ") + ops::op_def(op_).name);
    }
  }
  const char* name() const override { return name_; }

 private:
  OpId op_;
  ops::Attrs attrs_;
  const char* name_;
  Gemm gemm_;
};

// The kernel's name for --profile, or null when the GPU does not run this node.
const char* covered(OpId op, const ops::Attrs& attrs, std::span<const InputInfo> in) {
  if (in.empty() && op != OpId::Concatenate) return nullptr;
  if (ops::has_flag(op, ops::kElementwiseBinary))
    return in.size() == 2 && in[0].dtype == in[1].dtype && binary_covered(op, in[0].dtype) ? "cuda:binary" : nullptr;
  if (ops::has_flag(op, ops::kElementwiseUnary)) return unary_covered(op, in[0].dtype) ? "cuda:unary" : nullptr;
  switch (op) {
    case OpId::Where:
      return in.size() == 3 && in[0].dtype == DType::kBool && in[1].dtype == in[2].dtype ? "cuda:where" : nullptr;
    case OpId::ElementwiseChain:  // one output: a chain with several runs on the CPU
      return all_f32(in) && ops::output_count(op, attrs) == 1 ? "cuda:elementwise_chain" : nullptr;
    case OpId::Sum: case OpId::Mean: case OpId::Max: case OpId::Min:
      return in[0].dtype == DType::kF32 ? "cuda:reduce" : nullptr;
    case OpId::ArgMax: case OpId::ArgMin: return in[0].dtype == DType::kF32 ? "cuda:arg_reduce" : nullptr;
    case OpId::Softmax: case OpId::LogSoftmax: return in[0].dtype == DType::kF32 ? "cuda:softmax" : nullptr;
    case OpId::LayerNorm: return all_f32(in) ? "cuda:layer_norm" : nullptr;
    case OpId::CumSum:
      return in[0].dtype == DType::kF32 || in[0].dtype == DType::kI64 ? "cuda:cumsum" : nullptr;
    case OpId::MatMul: return all_f32(in) ? "cublaslt:matmul" : nullptr;
    case OpId::FullyConnected: return all_f32(in) ? "cublaslt:fully_connected" : nullptr;
    case OpId::Transpose: return "cuda:transpose";
    case OpId::Take: return in.size() == 2 && is_int(in[1].dtype) ? "cuda:take" : nullptr;
    case OpId::Concatenate: {
      for (const InputInfo& i : in)
        if (i.dtype != in[0].dtype) return nullptr;
      const auto axis = attrs.i(ops::attr::kAxisValue);
      return in.empty() || axis < 0 || axis >= in[0].rank ? nullptr : "cuda:concatenate";
    }
    case OpId::Reshape: case OpId::Squeeze: case OpId::ExpandDims: return "cuda:copy";
    case OpId::Conv2D: case OpId::Conv2DBias: return all_f32(in) ? "cuda:conv2d_direct" : nullptr;
    case OpId::MaxPool2D: case OpId::AvgPool2D: return in[0].dtype == DType::kF32 ? "cuda:pool2d" : nullptr;
    default: return nullptr;
  }
}

}  // namespace

std::unique_ptr<Kernel> prepare(ops::OpId op, const ops::Attrs& attrs, std::span<const InputInfo> inputs) {
  const char* name = covered(op, attrs, inputs);
  if (name == nullptr) return nullptr;
  return std::make_unique<NodeKernel>(op, attrs, name);
}

}  // namespace sg::kernels::cuda
