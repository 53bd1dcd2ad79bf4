// The SIMD kernels of quantized_gemm.h, one template compiled per instruction set
// with target attributes (GCC/Clang vector extensions, as simd/simd.h): V is the
// f32 vector, and a tile is MR rows x 4 vectors of columns, the accumulators in
// registers for all of K. W's row k of the tile is widened once and used by every
// row of A in the tile.
#include <algorithm>
#include <cstring>
#include <type_traits>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
// GCC 12's AVX-512 headers start some conversions from an undefined register.
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#endif

#include "quant/quantized_gemm.h"
#include "stagegraph/dtype.h"

#define SG_Q_INLINE inline __attribute__((always_inline))

namespace sg::kernels::quant::detail {
namespace {

namespace baseline {
#include "quant/quantized_gemm_tile.inc"
}  // namespace baseline

#if defined(__x86_64__) && defined(__GNUC__)
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#endif
namespace avx2 {
#include "quant/quantized_gemm_tile.inc"
}  // namespace avx2
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx2,fma,f16c")
#endif
namespace avx512 {
#include "quant/quantized_gemm_tile.inc"
}  // namespace avx512
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif

// The columns no vector covers, one element at a time.
void scalar_columns(const GemmProblem& p, size_t begin, size_t end) {
  if (begin >= end) return;
  float w[64];
  for (size_t m = 0; m < p.m; ++m)
    for (size_t n = begin; n < end; ++n) p.c[m * p.n + n] = 0.0f;
  for (size_t k = 0; k < p.k; ++k) {
    dequantize(p.w, k * p.n + begin, end - begin, w);
    for (size_t m = 0; m < p.m; ++m) {
      const float av = p.a[m * p.k + k];
      for (size_t n = begin; n < end; ++n) p.c[m * p.n + n] += av * w[n - begin];
    }
  }
}

}  // namespace

void gemm_baseline(const GemmProblem& p, size_t col_begin, size_t col_end) {
  using V4 = float __attribute__((vector_size(16)));
  scalar_columns(p, baseline::run_strips<V4, 2>(p, col_begin, col_end), col_end);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2,fma,f16c"))) void gemm_avx2(const GemmProblem& p, size_t col_begin, size_t col_end) {
  using V8 = float __attribute__((vector_size(32)));
  scalar_columns(p, avx2::run_strips<V8, 3>(p, col_begin, col_end), col_end);
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c"))) void gemm_avx512(const GemmProblem& p,
                                                                                     size_t col_begin,
                                                                                     size_t col_end) {
  using V16 = float __attribute__((vector_size(64)));
  scalar_columns(p, avx512::run_strips<V16, 4>(p, col_begin, col_end), col_end);
}
#endif

}  // namespace sg::kernels::quant::detail
