// Elementwise kernels: binary ops with NumPy broadcasting, unary math, where,
// and the compiler's fused elementwise chains. One thread per output element,
// grid-stride; broadcasting walks the coalesced plan of reference/broadcast.h.
#include <cmath>
#include <cstdint>

#include "cuda/common.cuh"
#include "cuda/kernels.h"
#include "reference/broadcast.h"

namespace sg::kernels::cuda {
namespace {

using ops::OpId;

template <int N>
Strided<N> strided_from(const BroadcastPlan<N>& p) {
  Strided<N> s;
  s.rank = p.rank;
  for (int d = 0; d < p.rank; ++d) {
    s.shape[d] = p.shape[d];
    for (int k = 0; k < N; ++k) s.strides[k][d] = p.strides[k][d];
  }
  return s;
}

// Offsets of output element i in each operand.
template <int N>
__device__ __forceinline__ void offsets(const Strided<N>& s, int64_t i, int64_t* off) {
  for (int k = 0; k < N; ++k) off[k] = 0;
  for (int d = s.rank - 1; d >= 0; --d) {
    const int64_t n = s.shape[d];
    const int64_t c = i % n;
    i /= n;
    for (int k = 0; k < N; ++k) off[k] += c * s.strides[k][d];
  }
}

// ---- binary ---------------------------------------------------------------------
// NumPy's semantics on f32 where they differ from IEEE's min/max: NaN propagates.
template <OpId Op, class T>
__device__ __forceinline__ auto binary_apply(T a, T b) {
  if constexpr (Op == OpId::Add) return T(a + b);
  else if constexpr (Op == OpId::Sub) return T(a - b);
  else if constexpr (Op == OpId::Mul) return T(a * b);
  else if constexpr (Op == OpId::Div) return T(a / b);
  else if constexpr (Op == OpId::Pow) return T(powf(a, b));
  else if constexpr (Op == OpId::Maximum) {
    if constexpr (std::is_floating_point_v<T>) return (a != a || b != b) ? T(NAN) : (a > b ? a : b);
    else return a > b ? a : b;
  } else if constexpr (Op == OpId::Minimum) {
    if constexpr (std::is_floating_point_v<T>) return (a != a || b != b) ? T(NAN) : (a < b ? a : b);
    else return a < b ? a : b;
  } else if constexpr (Op == OpId::Less) return bool(a < b);
  else if constexpr (Op == OpId::LessEqual) return bool(a <= b);
  else if constexpr (Op == OpId::Greater) return bool(a > b);
  else if constexpr (Op == OpId::GreaterEqual) return bool(a >= b);
  else if constexpr (Op == OpId::Equal) return bool(a == b);
  else if constexpr (Op == OpId::NotEqual) return bool(a != b);
  else if constexpr (Op == OpId::LogicalAnd) return bool(a && b);
  else if constexpr (Op == OpId::LogicalOr) return bool(a || b);
}

template <OpId Op, class T, class R>
__global__ void binary_kernel(const T* a, const T* b, R* o, int64_t n, Strided<2> s) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t off[2];
    offsets<2>(s, i, off);
    o[i] = R(binary_apply<Op, T>(a[off[0]], b[off[1]]));
  }
}

template <OpId Op, class T, class R>
Status launch_binary(Context& ctx, const TensorRef& a, const TensorRef& b, TensorRef& o) {
  BroadcastPlan<2> plan;
  if (!make_broadcast_plan<2>(o, {&a, &b}, plan)) return internal_error("cuda binary: operands do not broadcast");
  const int64_t n = o.numel();
  if (n == 0) return Status::Ok();
  binary_kernel<Op, T, R><<<grid_for(n), kBlock, 0, state(ctx).stream>>>(a.as<const T>(), b.as<const T>(), o.as<R>(), n,
                                                                           strided_from(plan));
  return launched(ops::op_def(Op).name);
}

template <OpId Op>
Status binary_for(Context& ctx, const TensorRef& a, const TensorRef& b, TensorRef& o) {
  constexpr bool cmp = Op == OpId::Less || Op == OpId::LessEqual || Op == OpId::Greater ||
                       Op == OpId::GreaterEqual || Op == OpId::Equal || Op == OpId::NotEqual;
  constexpr bool logical = Op == OpId::LogicalAnd || Op == OpId::LogicalOr;
  if constexpr (logical) {
    return launch_binary<Op, bool, bool>(ctx, a, b, o);
  } else if constexpr (cmp) {
    switch (a.dtype) {
      case DType::kF32: return launch_binary<Op, float, bool>(ctx, a, b, o);
      case DType::kI32: return launch_binary<Op, int32_t, bool>(ctx, a, b, o);
      case DType::kI64: return launch_binary<Op, int64_t, bool>(ctx, a, b, o);
      default: return internal_error("cuda comparison: dtype");
    }
  } else if constexpr (Op == OpId::Div || Op == OpId::Pow) {
    return launch_binary<Op, float, float>(ctx, a, b, o);
  } else {
    switch (a.dtype) {
      case DType::kF32: return launch_binary<Op, float, float>(ctx, a, b, o);
      case DType::kI32: return launch_binary<Op, int32_t, int32_t>(ctx, a, b, o);
      case DType::kI64: return launch_binary<Op, int64_t, int64_t>(ctx, a, b, o);
      default: return internal_error("cuda binary: dtype");
    }
  }
}

// ---- unary ----------------------------------------------------------------------
template <OpId Op>
__device__ __forceinline__ float unary_apply(float x) {
  if constexpr (Op == OpId::Neg) return -x;
  else if constexpr (Op == OpId::Abs) return fabsf(x);
  else if constexpr (Op == OpId::Exp) return expf(x);
  else if constexpr (Op == OpId::Log) return logf(x);
  else if constexpr (Op == OpId::Sqrt) return sqrtf(x);
  else if constexpr (Op == OpId::Rsqrt) return 1.0f / sqrtf(x);
  else if constexpr (Op == OpId::Sin) return sinf(x);
  else if constexpr (Op == OpId::Cos) return cosf(x);
  else if constexpr (Op == OpId::Tanh) return tanhf(x);
  else if constexpr (Op == OpId::Sigmoid) {
    if (x >= 0) return 1.0f / (1.0f + expf(-x));
    const float e = expf(x);
    return e / (1.0f + e);
  } else if constexpr (Op == OpId::Relu) return x != x ? x : (x > 0.0f ? x : 0.0f);
  else if constexpr (Op == OpId::Gelu) return 0.5f * x * erfcf(x * -0.70710678118654752440f);
  else if constexpr (Op == OpId::Floor) return floorf(x);
  else if constexpr (Op == OpId::Ceil) return ceilf(x);
  else if constexpr (Op == OpId::Round) return rintf(x);
  else if constexpr (Op == OpId::Sign) return x != x ? x : float((x > 0.0f) - (x < 0.0f));
  else if constexpr (Op == OpId::Square) return x * x;
}

template <OpId Op>
__global__ void unary_kernel(const float* x, float* o, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    o[i] = unary_apply<Op>(x[i]);
}

template <OpId Op>
Status unary_for(Context& ctx, const TensorRef& x, TensorRef& o) {
  const int64_t n = o.numel();
  if (n == 0) return Status::Ok();
  unary_kernel<Op><<<grid_for(n), kBlock, 0, state(ctx).stream>>>(x.as<const float>(), o.as<float>(), n);
  return launched(ops::op_def(Op).name);
}

// ---- where ----------------------------------------------------------------------
template <class T>
__global__ void where_kernel(const bool* c, const T* a, const T* b, T* o, int64_t n, Strided<3> s) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t off[3];
    offsets<3>(s, i, off);
    o[i] = c[off[0]] ? a[off[1]] : b[off[2]];
  }
}

// ---- elementwise chain ----------------------------------------------------------
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

Status run_binary(Context& ctx, OpId op, const TensorRef& a, const TensorRef& b, TensorRef& o) {
  switch (op) {
#define SG_CUDA_BINARY(X) case OpId::X: return binary_for<OpId::X>(ctx, a, b, o);
    SG_CUDA_BINARY(Add) SG_CUDA_BINARY(Sub) SG_CUDA_BINARY(Mul) SG_CUDA_BINARY(Div) SG_CUDA_BINARY(Pow)
    SG_CUDA_BINARY(Maximum) SG_CUDA_BINARY(Minimum) SG_CUDA_BINARY(Less) SG_CUDA_BINARY(LessEqual)
    SG_CUDA_BINARY(Greater) SG_CUDA_BINARY(GreaterEqual) SG_CUDA_BINARY(Equal) SG_CUDA_BINARY(NotEqual)
    SG_CUDA_BINARY(LogicalAnd) SG_CUDA_BINARY(LogicalOr)
#undef SG_CUDA_BINARY
    default: return internal_error("cuda: not a binary op");
  }
}

bool binary_covered(OpId op, DType in) {
  switch (op) {
    case OpId::Add: case OpId::Sub: case OpId::Mul: case OpId::Maximum: case OpId::Minimum:
    case OpId::Less: case OpId::LessEqual: case OpId::Greater: case OpId::GreaterEqual:
    case OpId::Equal: case OpId::NotEqual:
      return in == DType::kF32 || in == DType::kI32 || in == DType::kI64;
    case OpId::Div: case OpId::Pow:
      return in == DType::kF32;
    case OpId::LogicalAnd: case OpId::LogicalOr:
      return in == DType::kBool;
    default:
      return false;
  }
}

Status run_unary(Context& ctx, OpId op, const TensorRef& x, TensorRef& o) {
  switch (op) {
#define SG_CUDA_UNARY(X) case OpId::X: return unary_for<OpId::X>(ctx, x, o);
    SG_CUDA_UNARY(Neg) SG_CUDA_UNARY(Abs) SG_CUDA_UNARY(Exp) SG_CUDA_UNARY(Log) SG_CUDA_UNARY(Sqrt)
    SG_CUDA_UNARY(Rsqrt) SG_CUDA_UNARY(Sin) SG_CUDA_UNARY(Cos) SG_CUDA_UNARY(Tanh) SG_CUDA_UNARY(Sigmoid)
    SG_CUDA_UNARY(Relu) SG_CUDA_UNARY(Gelu) SG_CUDA_UNARY(Floor) SG_CUDA_UNARY(Ceil) SG_CUDA_UNARY(Round)
    SG_CUDA_UNARY(Sign) SG_CUDA_UNARY(Square)
#undef SG_CUDA_UNARY
    default: return internal_error("cuda: not a unary op");
  }
}

bool unary_covered(OpId op, DType in) {
  if (in != DType::kF32) return false;
  switch (op) {
    case OpId::Neg: case OpId::Abs: case OpId::Exp: case OpId::Log: case OpId::Sqrt: case OpId::Rsqrt:
    case OpId::Sin: case OpId::Cos: case OpId::Tanh: case OpId::Sigmoid: case OpId::Relu: case OpId::Gelu:
    case OpId::Floor: case OpId::Ceil: case OpId::Round: case OpId::Sign: case OpId::Square:
      return true;
    default:
      return false;
  }
}

Status run_where(Context& ctx, const TensorRef& c, const TensorRef& a, const TensorRef& b, TensorRef& o) {
  BroadcastPlan<3> plan;
  if (!make_broadcast_plan<3>(o, {&c, &a, &b}, plan)) return internal_error("cuda where: operands do not broadcast");
  const int64_t n = o.numel();
  if (n == 0) return Status::Ok();
  const unsigned g = grid_for(n);
  cudaStream_t st = state(ctx).stream;
  switch (dtype_size(o.dtype)) {
    case 1: where_kernel<uint8_t><<<g, kBlock, 0, st>>>(c.as<const bool>(), a.as<const uint8_t>(), b.as<const uint8_t>(), o.as<uint8_t>(), n, strided_from(plan)); break;
    case 2: where_kernel<uint16_t><<<g, kBlock, 0, st>>>(c.as<const bool>(), a.as<const uint16_t>(), b.as<const uint16_t>(), o.as<uint16_t>(), n, strided_from(plan)); break;
    case 4: where_kernel<uint32_t><<<g, kBlock, 0, st>>>(c.as<const bool>(), a.as<const uint32_t>(), b.as<const uint32_t>(), o.as<uint32_t>(), n, strided_from(plan)); break;
    default: where_kernel<uint64_t><<<g, kBlock, 0, st>>>(c.as<const bool>(), a.as<const uint64_t>(), b.as<const uint64_t>(), o.as<uint64_t>(), n, strided_from(plan)); break;
  }
  return launched("where");
}

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
