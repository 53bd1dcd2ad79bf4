// What the x86 quantized and half-precision kernels share (dynamic_gemm_x86.cc,
// half_gemm_x86.cc). Included only where __x86_64__ is defined. The AVX-512 store is
// a macro, expanded inside each file's AVX-512 target region (a function without that
// target could not call AVX-512 intrinsics, nor be inlined into the tiles).
#pragma once

#include <cstdint>
#include <cstring>

#define SG_QUANT_INLINE inline __attribute__((always_inline))

namespace sg::kernels::quant::detail {

// Four bytes of an activation row (4 K of int8, 2 K of bf16), to broadcast.
SG_QUANT_INLINE int32_t load32(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

}  // namespace sg::kernels::quant::detail

// store(c, col, n, v, e): 16 columns of C's row at `col` (masked past n), after the
// epilogue (epilogue.h): + bias, then relu as `v < 0 ? 0 : v` (NaN stays NaN).
#define SG_QUANT_AVX512_STORE                                                                    \
  SG_QUANT_INLINE void store(float* c, size_t col, size_t n, __m512 v, const Epilogue& e) {      \
    const __mmask16 keep = col + 16 <= n ? __mmask16(0xFFFF) : __mmask16((1u << (n - col)) - 1); \
    if (e.bias != nullptr) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(keep, e.bias + col));     \
    if (e.relu) {                                                                                \
      const __m512 zero = _mm512_setzero_ps();                                                   \
      v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), zero);                  \
    }                                                                                            \
    _mm512_mask_storeu_ps(c + col, keep, v);                                                     \
  }
