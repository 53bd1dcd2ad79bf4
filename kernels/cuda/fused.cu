// The fused ops' CUDA kernels: the compiler's elementwise chains, one thread per
// output element running the chain's steps in registers. (fully_connected runs
// through gemm.cu, conv2d_bias through nn.cu's run_conv2d.)
#include <cmath>
#include <cstdint>

#include "cuda/common.cuh"
#include "cuda/elementwise_apply.cuh"
#include "cuda/kernels.h"

namespace sg::kernels::cuda {
namespace {

using ops::OpId;

struct ChainSteps {
  int count = 0;
  int num_inputs = 0;
  int16_t op[ops::attr::kMaxChainSteps];
  int16_t a[ops::attr::kMaxChainSteps];
  int16_t b[ops::attr::kMaxChainSteps];
  const float* in[ops::attr::kMaxChainSteps];
  bool scalar[ops::attr::kMaxChainSteps];  // the input has one element
};

__device__ __forceinline__ float chain_op(int op, float x, float y) {
  switch (OpId(op)) {
    case OpId::Add: return x + y;
    case OpId::Sub: return x - y;
    case OpId::Mul: return x * y;
    case OpId::Div: return x / y;
    case OpId::Maximum: return binary_apply<OpId::Maximum, float>(x, y);
    case OpId::Minimum: return binary_apply<OpId::Minimum, float>(x, y);
    case OpId::Tanh: return tanhf(x);
    case OpId::Gelu: return unary_apply<OpId::Gelu>(x);
    case OpId::Relu: return unary_apply<OpId::Relu>(x);
    case OpId::Sqrt: return sqrtf(x);  // correctly rounded, as the sqrt kernel
    default: return NAN;
  }
}

__global__ void chain_kernel(ChainSteps st, float* o, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float r[ops::attr::kMaxChainSteps] = {};
    const auto operand = [&](int k) {
      return k < st.num_inputs ? st.in[k][st.scalar[k] ? 0 : i] : r[k - st.num_inputs];
    };
    for (int s = 0; s < st.count; ++s) r[s] = chain_op(st.op[s], operand(st.a[s]), st.b[s] < 0 ? 0.0f : operand(st.b[s]));
    o[i] = r[st.count - 1];
  }
}

}  // namespace

Status run_chain(Context& ctx, const ops::Attrs& attrs, std::span<const TensorRef> in, TensorRef& o) {
  const std::vector<int64_t>& steps = attrs.ints(ops::attr::kChainSteps);
  ChainSteps st;
  st.count = int(steps.size() / 3);
  st.num_inputs = int(in.size());
  if (st.count < 1 || st.count > int(ops::attr::kMaxChainSteps) || in.size() > ops::attr::kMaxChainSteps)
    return internal_error("cuda elementwise_chain: steps");
  for (int s = 0; s < st.count; ++s) {
    st.op[s] = int16_t(steps[3 * s]);
    st.a[s] = int16_t(steps[3 * s + 1]);
    st.b[s] = int16_t(steps[3 * s + 2]);
  }
  for (size_t k = 0; k < in.size(); ++k) {
    st.in[k] = in[k].as<const float>();
    st.scalar[k] = in[k].numel() == 1 && o.numel() != 1;
  }
  const int64_t n = o.numel();
  if (n == 0) return Status::Ok();
  chain_kernel<<<grid_for(n), kBlock, 0, state(ctx).stream>>>(st, o.as<float>(), n);
  return launched("elementwise_chain");
}

}  // namespace sg::kernels::cuda
