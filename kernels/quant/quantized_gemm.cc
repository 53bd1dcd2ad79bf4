#include "quant/quantized_gemm.h"

#include <algorithm>

namespace sg::kernels::quant {
namespace {

// The reference: C row by row of W, each row widened once into `row`, accumulated
// in k order for every row of A.
void gemm_reference(const GemmProblem& p, size_t begin, size_t end, float* row) {
  for (size_t m = 0; m < p.m; ++m) std::fill(p.c + m * p.n + begin, p.c + m * p.n + end, 0.0f);
  for (size_t k = 0; k < p.k; ++k) {
    dequantize(p.w, k * p.n + begin, end - begin, row);
    for (size_t m = 0; m < p.m; ++m) {
      const float av = p.a[m * p.k + k];
      float* c = p.c + m * p.n;
      for (size_t n = begin; n < end; ++n) c[n] += av * row[n - begin];
    }
  }
}

bool simd_layout(const Layout& l) {
  if (l.dims.size() != 2) return false;
  switch (l.storage) {
    case Storage::kInt8: return l.axis == 1;
    case Storage::kInt4: return l.axis == 0 && l.dims[1] % 2 == 0;
    case Storage::kBF16:
    case Storage::kF16: return true;
    case Storage::kF32: return false;
  }
  return false;
}

}  // namespace

const char* gemm_isa_name(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::kReference: return "reference";
    case GemmIsa::kBaseline: return "baseline";
    case GemmIsa::kAvx2: return "avx2";
    case GemmIsa::kAvx512: return "avx512";
  }
  return "?";
}

GemmIsa best_gemm_isa(const Layout& l) {
  if (!simd_layout(l)) return GemmIsa::kReference;
#if defined(__x86_64__) && defined(__GNUC__)
  // F16C comes with every AVX2 and AVX-512 CPU (and clang's builtin cannot ask for it).
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    return GemmIsa::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return GemmIsa::kAvx2;
#endif
  return GemmIsa::kBaseline;
}

size_t gemm_column_tile(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::kAvx512: return 128;
    case GemmIsa::kAvx2: return 64;
    case GemmIsa::kBaseline: return 16;
    case GemmIsa::kReference: return 64;
  }
  return 64;
}

void gemm_columns(GemmIsa isa, const GemmProblem& p, size_t col_begin, size_t col_end, float* row) {
  switch (isa) {
    case GemmIsa::kReference: gemm_reference(p, col_begin, col_end, row); return;
    case GemmIsa::kBaseline: detail::gemm_baseline(p, col_begin, col_end); return;
#if defined(__x86_64__) && defined(__GNUC__)
    case GemmIsa::kAvx2: detail::gemm_avx2(p, col_begin, col_end); return;
    case GemmIsa::kAvx512: detail::gemm_avx512(p, col_begin, col_end); return;
#else
    default: gemm_reference(p, col_begin, col_end, row); return;
#endif
  }
}

}  // namespace sg::kernels::quant
