// The AVX-512 kernels of half_gemm.h, each in a target region of its own and
// picked at run time by what the CPU reports: the widening kernel (AVX-512F) and
// the bf16 dot-product kernel (AVX512_BF16: vcvtne2ps2bf16, vdpbf16ps).
//
// A tile is MR rows x NP panels of 16 columns, its accumulators in registers for
// all of K; each step's NP weight vectors serve all MR rows.
#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#include <cstring>
#include <type_traits>

#include "quant/half_gemm.h"
#include "quant/x86_util.h"

#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace sg::kernels::quant::detail {
namespace {

// The rows in tiles: 8 x 2 panels, then 4 x 4, then the last rows; one row (a
// decoder's step, batch 1) 8 panels wide.
template <template <int, int> class Tile, class A>
SG_QUANT_INLINE void run_rows(const HalfPanels& p, A a, size_t lda, size_t m, float* c, size_t pb, size_t pe,
                           const Epilogue& e) {
  const auto panels = [&](auto mr, auto np, size_t row) {
    constexpr int MR = decltype(mr)::value, NP = decltype(np)::value;
    size_t pan = pb;
    for (; pan + NP <= pe; pan += NP) Tile<MR, NP>::run(p, a + row * lda, lda, c + row * p.n, pan, e);
    // The last panels in fewer, still several at a time (one accumulator per row
    // waits on each fma's latency).
    if constexpr (NP > 4)
      for (; pan + 4 <= pe; pan += 4) Tile<MR, 4>::run(p, a + row * lda, lda, c + row * p.n, pan, e);
    if constexpr (NP > 2)
      for (; pan + 2 <= pe; pan += 2) Tile<MR, 2>::run(p, a + row * lda, lda, c + row * p.n, pan, e);
    for (; pan < pe; ++pan) Tile<MR, 1>::run(p, a + row * lda, lda, c + row * p.n, pan, e);
  };
  using I1 = std::integral_constant<int, 1>;
  using I2 = std::integral_constant<int, 2>;
  using I4 = std::integral_constant<int, 4>;
  size_t row = 0;
  for (; row + 8 <= m; row += 8) panels(std::integral_constant<int, 8>{}, I2{}, row);
  if (row + 4 <= m) {
    panels(I4{}, I4{}, row);
    row += 4;
  }
  switch (m - row) {
    case 3: panels(std::integral_constant<int, 3>{}, I4{}, row); break;
    case 2: panels(I2{}, I4{}, row); break;
    case 1: panels(I1{}, std::integral_constant<int, 8>{}, row); break;
    default: break;
  }
}

}  // namespace

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx2,fma,f16c")
#endif
namespace widen {
namespace {

SG_QUANT_AVX512_STORE

template <bool F16>
struct WidenTile {
  template <int MR, int NP>
  struct T {
    __attribute__((noinline)) static void run(const HalfPanels& p, const float* a, size_t lda, float* c,
                                              size_t panel, const Epilogue& e) {
      const size_t ph = p.panel_halves();
      const uint16_t* wp = p.data.data() + panel * ph;
      __m512 acc[MR][NP];
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
        for (int j = 0; j < NP; ++j) acc[r][j] = _mm512_setzero_ps();
      for (size_t k = 0; k < p.k; ++k) {
        __m512 w[NP];
#pragma GCC unroll 8
        for (int j = 0; j < NP; ++j) {
          const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wp + size_t(j) * ph + k * 16));
          w[j] = F16 ? _mm512_cvtph_ps(h) : _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
        }
#pragma GCC unroll 8
        for (int r = 0; r < MR; ++r) {
          const __m512 x = _mm512_set1_ps(a[size_t(r) * lda + k]);
#pragma GCC unroll 8
          for (int j = 0; j < NP; ++j) acc[r][j] = _mm512_fmadd_ps(x, w[j], acc[r][j]);
        }
      }
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
        for (int j = 0; j < NP; ++j) store(c + size_t(r) * p.n, (panel + size_t(j)) * 16, p.n, acc[r][j], e);
    }
  };
};

}  // namespace
}  // namespace widen

void half_widen_avx512(const HalfPanels& p, const float* a, size_t m, float* c, size_t panel_begin,
                       size_t panel_end, const Epilogue& e) {
  if (p.storage == Storage::kF16) run_rows<widen::WidenTile<true>::T>(p, a, p.k, m, c, panel_begin, panel_end, e);
  else run_rows<widen::WidenTile<false>::T>(p, a, p.k, m, c, panel_begin, panel_end, e);
}

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,avx2,fma,f16c"))), \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512bf16,avx2,fma,f16c")
#endif
namespace dot {
namespace {

SG_QUANT_AVX512_STORE

template <int MR, int NP>
struct DotTile {
  __attribute__((noinline)) static void run(const HalfPanels& p, const uint16_t* a, size_t lda, float* c,
                                            size_t panel, const Epilogue& e) {
    const size_t ph = p.panel_halves(), steps = p.kpad / 2;
    const uint16_t* wp = p.data.data() + panel * ph;
    __m512 acc[MR][NP];
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
      for (int j = 0; j < NP; ++j) acc[r][j] = _mm512_setzero_ps();
    for (size_t t = 0; t < steps; ++t) {
      __m512bh w[NP];
#pragma GCC unroll 8
      for (int j = 0; j < NP; ++j) w[j] = (__m512bh)_mm512_loadu_si512(wp + size_t(j) * ph + t * 32);
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        const __m512bh x = (__m512bh)_mm512_set1_epi32(load32(a + size_t(r) * lda + 2 * t));
#pragma GCC unroll 8
        for (int j = 0; j < NP; ++j) acc[r][j] = _mm512_dpbf16_ps(acc[r][j], x, w[j]);
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
      for (int j = 0; j < NP; ++j) store(c + size_t(r) * p.n, (panel + size_t(j)) * 16, p.n, acc[r][j], e);
  }
};

}  // namespace
}  // namespace dot

void half_dot_avx512bf16(const HalfPanels& p, const uint16_t* a, size_t m, float* c, size_t panel_begin,
                         size_t panel_end, const Epilogue& e) {
  run_rows<dot::DotTile>(p, a, p.kpad, m, c, panel_begin, panel_end, e);
}

// 32 values a step: two vectors of 16 to one of 32 bf16 (the tail masked: zeros).
void round_rows_bf16_avx512(const float* a, size_t m, size_t k, size_t kpad, uint16_t* out) {
  for (size_t r = 0; r < m; ++r) {
    const float* src = a + r * k;
    uint16_t* dst = out + r * kpad;
    for (size_t i = 0; i < kpad; i += 32) {
      const size_t left = k > i ? k - i : 0;
      const __mmask16 lo = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
      const __mmask16 hi = left >= 32 ? __mmask16(0xFFFF) : left > 16 ? __mmask16((1u << (left - 16)) - 1) : 0;
      const __m512bh v =
          _mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(hi, src + i + 16), _mm512_maskz_loadu_ps(lo, src + i));
      const size_t store = kpad - i >= 32 ? 32 : kpad - i;
      const __mmask32 keep = store == 32 ? __mmask32(0xFFFFFFFFu) : __mmask32((1u << store) - 1);
      _mm512_mask_storeu_epi16(dst + i, keep, (__m512i)v);
    }
  }
}

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

}  // namespace sg::kernels::quant::detail

#endif
