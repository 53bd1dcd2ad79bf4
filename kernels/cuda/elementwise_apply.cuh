// One element of a binary or unary elementwise op on the device, shared by the
// elementwise kernels (elementwise.cu) and the fused chains (fused.cu).
#pragma once

#include <cmath>
#include <type_traits>

#include "cuda/common.cuh"

namespace sg::kernels::cuda {

// NumPy's semantics on f32 where they differ from IEEE's min/max: NaN propagates.
template <ops::OpId Op, class T>
__device__ __forceinline__ auto binary_apply(T a, T b) {
  if constexpr (Op == ops::OpId::Add) return T(a + b);
  else if constexpr (Op == ops::OpId::Sub) return T(a - b);
  else if constexpr (Op == ops::OpId::Mul) return T(a * b);
  else if constexpr (Op == ops::OpId::Div) return T(a / b);
  else if constexpr (Op == ops::OpId::Pow) return T(powf(a, b));
  else if constexpr (Op == ops::OpId::Maximum) {
    if constexpr (std::is_floating_point_v<T>) return (a != a || b != b) ? T(NAN) : (a > b ? a : b);
    else return a > b ? a : b;
  } else if constexpr (Op == ops::OpId::Minimum) {
    if constexpr (std::is_floating_point_v<T>) return (a != a || b != b) ? T(NAN) : (a < b ? a : b);
    else return a < b ? a : b;
  } else if constexpr (Op == ops::OpId::Less) return bool(a < b);
  else if constexpr (Op == ops::OpId::LessEqual) return bool(a <= b);
  else if constexpr (Op == ops::OpId::Greater) return bool(a > b);
  else if constexpr (Op == ops::OpId::GreaterEqual) return bool(a >= b);
  else if constexpr (Op == ops::OpId::Equal) return bool(a == b);
  else if constexpr (Op == ops::OpId::NotEqual) return bool(a != b);
  else if constexpr (Op == ops::OpId::LogicalAnd) return bool(a && b);
  else if constexpr (Op == ops::OpId::LogicalOr) return bool(a || b);
}

template <ops::OpId Op>
__device__ __forceinline__ float unary_apply(float x) {
  if constexpr (Op == ops::OpId::Neg) return -x;
  else if constexpr (Op == ops::OpId::Abs) return fabsf(x);
  else if constexpr (Op == ops::OpId::Exp) return expf(x);
  else if constexpr (Op == ops::OpId::Log) return logf(x);
  else if constexpr (Op == ops::OpId::Sqrt) return sqrtf(x);
  else if constexpr (Op == ops::OpId::Rsqrt) return 1.0f / sqrtf(x);
  else if constexpr (Op == ops::OpId::Sin) return sinf(x);
  else if constexpr (Op == ops::OpId::Cos) return cosf(x);
  else if constexpr (Op == ops::OpId::Tanh) return tanhf(x);
  else if constexpr (Op == ops::OpId::Sigmoid) {
    if (x >= 0) return 1.0f / (1.0f + expf(-x));
    const float e = expf(x);
    return e / (1.0f + e);
  } else if constexpr (Op == ops::OpId::Relu) return x != x ? x : (x > 0.0f ? x : 0.0f);
  else if constexpr (Op == ops::OpId::Gelu) return 0.5f * x * erfcf(x * -0.70710678118654752440f);
  else if constexpr (Op == ops::OpId::Floor) return floorf(x);
  else if constexpr (Op == ops::OpId::Ceil) return ceilf(x);
  else if constexpr (Op == ops::OpId::Round) return rintf(x);
  else if constexpr (Op == ops::OpId::Sign) return x != x ? x : float((x > 0.0f) - (x < 0.0f));
  else if constexpr (Op == ops::OpId::Square) return x * x;
}

}  // namespace sg::kernels::cuda
