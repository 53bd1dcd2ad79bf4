// fully_connected and conv2d_bias, the ops the -O2 compiler fuses: the matmul or
// conv2d reference kernel writes the output, then one pass adds the bias and
// applies the activation in place. The result is bit-identical to the unfused
// nodes' reference kernels (same accumulation, then add, then relu).
// elementwise_chain runs its steps' reference kernels block by block, each block's
// intermediate results on the stack (or in the output a step writes): the unfused
// nodes' results, without their buffers.
#include <algorithm>
#include <cmath>
#include <string>

#include "reference/kernel_util.h"
#include "reference/reference_kernels.h"
#include "selection/selected_ops.h"

namespace sg::kernels {

void bias_activation_f32(float* data, int64_t rows, int64_t channels, const float* bias, int64_t activation) {
  const bool relu = activation == ops::attr::kActRelu, tanh = activation == ops::attr::kActTanh;
  for (int64_t r = 0; r < rows; ++r) {
    float* row = data + r * channels;
    for (int64_t c = 0; c < channels; ++c) {
      const float v = row[c] + bias[c];
      // NumPy's maximum(v, 0): NaN stays NaN (the comparison is false for it).
      // tanh as the reference tanh kernel computes it.
      row[c] = tanh ? std::tanh(v) : relu && v < 0.0f ? 0.0f : v;
    }
  }
}

namespace {

// Checks the f32 output and bias against each other; the core kernel checks the rest.
Status check_epilogue(const char* op, std::span<const TensorRef> in, std::span<TensorRef> out, int64_t activation) {
  SG_RETURN_IF_ERROR(check_arity(op, in, 3, out));
  const TensorRef& b = in[2];
  const TensorRef& o = out[0];
  if (o.dtype != DType::kF32 || b.dtype != DType::kF32 || b.rank != 1 || o.rank < 1 ||
      o.shape[o.rank - 1] != b.shape[0])
    return internal_error(std::string(op) + ": bias " + describe(b) + " for output " + describe(o));
  if (activation < 0 || activation >= ops::attr::kNumActivations)
    return internal_error(std::string(op) + ": unknown activation " + std::to_string(activation));
  return Status::Ok();
}

void apply_epilogue(std::span<const TensorRef> in, std::span<TensorRef> out, int64_t activation) {
  const TensorRef& o = out[0];
  const int64_t channels = o.shape[o.rank - 1];
  if (channels == 0) return;
  bias_activation_f32(o.as<float>(), o.numel() / channels, channels, in[2].as<const float>(), activation);
}

Status fully_connected_kernel(const KernelContext& ctx, const ops::Attrs& attrs, std::span<const TensorRef> in,
                              std::span<TensorRef> out) {
  if (attrs.values.size() != 1) return internal_error("fully_connected: missing attributes");
  const int64_t act = attrs.i(ops::attr::kFcActivation);
  SG_RETURN_IF_ERROR(check_epilogue("fully_connected", in, out, act));
  if (in[1].rank != 2) return internal_error("fully_connected: weights " + describe(in[1]) + " are not rank 2");
  SG_RETURN_IF_ERROR(reference_kernel(ops::OpId::MatMul)(ctx, ops::Attrs{}, in.first(2), out));
  apply_epilogue(in, out, act);
  return Status::Ok();
}

Status conv2d_bias_kernel(const KernelContext& ctx, const ops::Attrs& attrs, std::span<const TensorRef> in,
                          std::span<TensorRef> out) {
  if (attrs.values.size() != 5) return internal_error("conv2d_bias: missing attributes");
  const int64_t act = attrs.i(ops::attr::kConvActivation);
  SG_RETURN_IF_ERROR(check_epilogue("conv2d_bias", in, out, act));
  // conv2d's kernel reads attributes 0..3, which conv2d_bias keeps at those positions.
  SG_RETURN_IF_ERROR(reference_kernel(ops::OpId::Conv2D)(ctx, attrs, in.first(2), out));
  apply_epilogue(in, out, act);
  return Status::Ok();
}

// Elements per block of elementwise_chain: a block's intermediates fit in L1.
constexpr int64_t kChainBlock = 256;

Status elementwise_chain_kernel(const KernelContext& ctx, const ops::Attrs& attrs, std::span<const TensorRef> in,
                                std::span<TensorRef> out) {
  if (attrs.values.empty() || out.size() != ops::output_count(ops::OpId::ElementwiseChain, attrs))
    return internal_error("elementwise_chain: missing attributes");
  const std::vector<int64_t>& steps = attrs.ints(ops::attr::kChainSteps);
  const size_t n_steps = steps.size() / 3;
  if (n_steps == 0 || n_steps > ops::attr::kMaxChainSteps)
    return internal_error("elementwise_chain: " + std::to_string(n_steps) + " steps");
  const TensorRef& o = out[0];
  const int64_t n = o.numel();
  for (const TensorRef& t : in)
    if (t.dtype != DType::kF32 || (t.numel() != n && t.numel() != 1))
      return internal_error("elementwise_chain: input " + describe(t) + " for output " + describe(o));
  // The output each step writes (-1: a temporary): `outputs`, else the last step.
  int64_t output_of[ops::attr::kMaxChainSteps];
  std::fill(output_of, output_of + n_steps, -1);
  output_of[n_steps - 1] = int64_t(out.size()) - 1;
  for (size_t k = 0; k + 1 < out.size(); ++k) output_of[attrs.ints(ops::attr::kChainOutputs)[k]] = int64_t(k);
  for (const TensorRef& t : out)
    if (t.dtype != DType::kF32 || t.numel() != n) return internal_error("elementwise_chain: output " + describe(t));
  float temps[ops::attr::kMaxChainSteps - 1][kChainBlock];
  for (int64_t start = 0; start < n; start += kChainBlock) {
    const int64_t len = std::min(kChainBlock, n - start);
    // The block of value v: an input's elements (its one element stays rank 0, so
    // the step broadcasts it), a step's temporary, the last step's the output.
    const auto block = [&](int64_t v) {
      TensorRef b;
      b.dtype = DType::kF32;
      if (size_t(v) < in.size()) {
        const bool one = in[size_t(v)].numel() == 1 && n != 1;
        b.rank = one ? 0 : 1;
        b.shape[0] = len;
        b.data = in[size_t(v)].as<float>() + (one ? 0 : start);
      } else {
        const size_t j = size_t(v) - in.size();
        b.rank = 1;
        b.shape[0] = len;
        b.data = output_of[j] >= 0 ? out[size_t(output_of[j])].as<float>() + start : temps[j];
      }
      return b;
    };
    for (size_t j = 0; j < n_steps; ++j) {
      const ops::OpId op = ops::OpId(steps[3 * j]);
      const bool binary = steps[3 * j + 2] >= 0;
      const TensorRef operands[2] = {block(steps[3 * j + 1]), binary ? block(steps[3 * j + 2]) : TensorRef{}};
      TensorRef result = block(int64_t(in.size() + j));
      SG_RETURN_IF_ERROR(reference_kernel(op)(ctx, ops::Attrs{}, std::span(operands, binary ? 2 : 1),
                                              std::span(&result, 1)));
    }
  }
  return Status::Ok();
}

}  // namespace

KernelFn fused_kernel(ops::OpId op) {
  switch (op) {
    case ops::OpId::FullyConnected: SG_RETURN_IF_SELECTED(FullyConnected, fully_connected_kernel);
    case ops::OpId::Conv2DBias: SG_RETURN_IF_SELECTED(Conv2DBias, conv2d_bias_kernel);
    case ops::OpId::ElementwiseChain: SG_RETURN_IF_SELECTED(ElementwiseChain, elementwise_chain_kernel);
    default: return nullptr;
  }
}

}  // namespace sg::kernels
