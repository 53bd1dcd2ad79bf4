// Elementwise kernels: binary ops with NumPy broadcasting, unary math, where (the
// compiler's fused elementwise chains: fused.cu). One thread per output element,
// grid-stride; broadcasting walks the coalesced plan of reference/broadcast.h.
#include <cmath>
#include <cstdint>

#include "cuda/common.cuh"
#include "cuda/elementwise_apply.cuh"
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

}  // namespace sg::kernels::cuda
