// What a quantized or half-precision GEMM's store adds to C (fully_connected's bias
// and relu, fused as the f32 GEMM does): C = sum + bias[n], then relu as
// `v < 0 ? 0 : v` (NaN stays NaN). The same two steps as the unfused nodes, so the
// result is bit-identical to them.
#pragma once

namespace sg::kernels::quant {

struct Epilogue {
  const float* bias = nullptr;  // [n], or null
  bool relu = false;
};

}  // namespace sg::kernels::quant
