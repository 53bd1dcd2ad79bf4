// C[M][N] = A[M][K] · W[K][N] for a weight W stored quantized or in half precision
// (weight_format.h), without widening W to f32 in memory: each kernel reads W's
// stored bytes and widens them in registers, so a layer streams 1/4 (int8), 1/8
// (int4) or 1/2 (bf16, f16) of the f32 bytes.
//
// The fast layouts are those graph-compile writes for a dense layer's [K][N]
// weight: int8 with a scale per output channel (axis 1), int4 in blocks along K
// (axis 0, a scale per block and column), bf16, f16. Their kernels are built per
// instruction set (AVX-512, AVX2, the baseline: SSE2 on x86-64, NEON on aarch64)
// and picked by what the CPU reports; any other layout runs the reference kernel,
// which widens one row of W at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "quant/weight_format.h"

namespace sg::kernels::quant {

enum class GemmIsa { kReference, kBaseline, kAvx2, kAvx512 };
const char* gemm_isa_name(GemmIsa isa);

// The best kernel this CPU runs for `l` ([K][N] weights), or kReference.
GemmIsa best_gemm_isa(const Layout& l);

struct GemmProblem {
  const float* a = nullptr;  // [M][K], row-major
  WeightView w;              // [K][N]
  float* c = nullptr;        // [M][N]
  size_t m = 0, k = 0, n = 0;
};

// Columns [col_begin, col_end) of C (multiples of gemm_column_tile(isa) but for
// the last), all M rows. `row` is scratch of N floats for the reference kernel.
void gemm_columns(GemmIsa isa, const GemmProblem& p, size_t col_begin, size_t col_end, float* row);
// The columns one SIMD tile covers (a unit of work to split across threads).
size_t gemm_column_tile(GemmIsa isa);

namespace detail {
// The SIMD kernels (quantized_gemm_simd.cc): columns [col_begin, col_end), which
// the caller keeps to whole tiles except at N.
void gemm_baseline(const GemmProblem& p, size_t col_begin, size_t col_end);
#if defined(__x86_64__) && defined(__GNUC__)
void gemm_avx2(const GemmProblem& p, size_t col_begin, size_t col_end);
void gemm_avx512(const GemmProblem& p, size_t col_begin, size_t col_end);
#endif
}  // namespace detail

}  // namespace sg::kernels::quant
