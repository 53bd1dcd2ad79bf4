// The AVX-512 micro-kernels of our packed-weight GEMM (dense_gemm.h): 8 x 32
// tiles, 16 zmm accumulators, two weight loads and eight broadcasts of A per k
// (XNNPACK's 7 x 16 tiles need eight loads per seven FMAs, which caps them at the
// load ports). Every function carries the AVX-512 target attribute; nothing here
// runs unless the CPU has AVX-512F (the caller checks).
#include "simd/dense_gemm.h"

#ifdef SG_SIMD_X86

#include <immintrin.h>

#include <algorithm>

namespace sg::kernels::xnn {
namespace {

constexpr size_t kNR = kAvx512NR;

// What the store of one tile does: which columns exist, whether C already holds a
// partial sum (K blocks after the first), whether this is the last K block (bias
// and relu), and the panel's bias.
struct TileStore {
  __mmask16 lo, hi;  // valid lanes of the tile's two column vectors
  bool first, last, relu;
  const float* bias;  // this panel's biases (its valid columns only), or null
};

// `mask`: the valid lanes (a masked load reads nothing past the bias's end).
SG_TARGET_AVX512 inline __attribute__((always_inline)) __m512 finish(__m512 v, const float* bias, __mmask16 mask,
                                                                     bool relu) {
  if (bias != nullptr) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, bias));
  // x < 0 ? 0 : x. A compare, not max: the compare is false for NaN, which then
  // stays NaN (NumPy's maximum(x, 0) keeps it; vmaxps would not).
  if (relu) v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ), _mm512_setzero_ps());
  return v;
}

template <int MR>
SG_TARGET_AVX512 inline __attribute__((always_inline)) void store_tile(__m512 (&lo)[MR], __m512 (&hi)[MR], float* c,
                                                                         size_t ldc, const TileStore& s) {
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    __m512 l = lo[r], h = hi[r];
    if (s.last) {
      l = finish(l, s.bias, s.lo, s.relu);
      h = finish(h, s.bias != nullptr ? s.bias + 16 : nullptr, s.hi, s.relu);
    }
    _mm512_mask_storeu_ps(c + size_t(r) * ldc, s.lo, l);
    _mm512_mask_storeu_ps(c + size_t(r) * ldc + 16, s.hi, h);
  }
}

template <int MR>
SG_TARGET_AVX512 inline __attribute__((always_inline)) void load_tile(__m512 (&lo)[MR], __m512 (&hi)[MR],
                                                                        const float* c, size_t ldc,
                                                                        const TileStore& s) {
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    lo[r] = s.first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(s.lo, c + size_t(r) * ldc);
    hi[r] = s.first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(s.hi, c + size_t(r) * ldc + 16);
  }
}

// MR rows x 32 columns of C over kc steps of k.
// Not inlined into the driver: inlined, GCC kept the accumulators on the stack.
template <int MR>
__attribute__((noinline)) SG_TARGET_AVX512
void tile(const float* a, size_t lda, const float* w, size_t kc, float* c, size_t ldc,
                           const TileStore& s) {
  __m512 lo[MR], hi[MR];
  load_tile<MR>(lo, hi, c, ldc, s);
  const float* ar[MR];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) ar[r] = a + size_t(r) * lda;
  for (size_t p = 0; p < kc; ++p) {
    const __m512 b0 = _mm512_load_ps(w + p * kNR), b1 = _mm512_load_ps(w + p * kNR + 16);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m512 av = _mm512_set1_ps(ar[r][p]);
      lo[r] = _mm512_fmadd_ps(av, b0, lo[r]);
      hi[r] = _mm512_fmadd_ps(av, b1, hi[r]);
    }
  }
  store_tile<MR>(lo, hi, c, ldc, s);
}

// One row: two accumulators alone would wait on the FMA latency at every k, so
// four interleaved sums over k run side by side and are added at the end; `lo`
// and `hi` come in holding the tile's start and go out holding the row's sums. A
// single-row product (a matrix-vector step of a recurrent cell) has no other row
// to reuse a K block, so it runs the panel's whole K and the weights stream once
// from L2. With kPrefetch each iteration reads 8 cache lines and asks for those
// kAhead bytes on, which cross into the next block or panel (they are
// contiguous), so the stream does not stall at their ends: 1 x 128 -> 1000 from
// L2 went 6.3 -> 5.8 us. Weights too large for L2 stream from L3, where
// the hardware prefetcher does better alone (kMaxPrefetchBytes).
template <bool kPrefetch>
SG_TARGET_AVX512 inline __attribute__((always_inline)) void row_sums(const float* a, const float* w, size_t k,
                                                                     __m512& lo, __m512& hi) {
  constexpr size_t kAhead = 2048 / sizeof(float);
  __m512 l1 = _mm512_setzero_ps(), h1 = l1, l2 = l1, h2 = l1, l3 = l1, h3 = l1;
  size_t p = 0;
  for (; p + 4 <= k; p += 4) {
    const float* q = w + p * kNR;
    if constexpr (kPrefetch) {
#pragma GCC unroll 8
      for (int line = 0; line < 8; ++line)
        _mm_prefetch(reinterpret_cast<const char*>(q + kAhead + line * 16), _MM_HINT_T0);
    }
    lo = _mm512_fmadd_ps(_mm512_set1_ps(a[p]), _mm512_load_ps(q), lo);
    hi = _mm512_fmadd_ps(_mm512_set1_ps(a[p]), _mm512_load_ps(q + 16), hi);
    l1 = _mm512_fmadd_ps(_mm512_set1_ps(a[p + 1]), _mm512_load_ps(q + 32), l1);
    h1 = _mm512_fmadd_ps(_mm512_set1_ps(a[p + 1]), _mm512_load_ps(q + 48), h1);
    l2 = _mm512_fmadd_ps(_mm512_set1_ps(a[p + 2]), _mm512_load_ps(q + 64), l2);
    h2 = _mm512_fmadd_ps(_mm512_set1_ps(a[p + 2]), _mm512_load_ps(q + 80), h2);
    l3 = _mm512_fmadd_ps(_mm512_set1_ps(a[p + 3]), _mm512_load_ps(q + 96), l3);
    h3 = _mm512_fmadd_ps(_mm512_set1_ps(a[p + 3]), _mm512_load_ps(q + 112), h3);
  }
  for (; p < k; ++p) {
    lo = _mm512_fmadd_ps(_mm512_set1_ps(a[p]), _mm512_load_ps(w + p * kNR), lo);
    hi = _mm512_fmadd_ps(_mm512_set1_ps(a[p]), _mm512_load_ps(w + p * kNR + 16), hi);
  }
  lo = _mm512_add_ps(_mm512_add_ps(lo, l1), _mm512_add_ps(l2, l3));
  hi = _mm512_add_ps(_mm512_add_ps(hi, h1), _mm512_add_ps(h2, h3));
}

// One row of one panel: a row tile of one (m % 8 == 1), or a single-row
// product's partial last panel.
__attribute__((noinline)) SG_TARGET_AVX512
void row(const float* a, const float* w, size_t k, float* c, const TileStore& s) {
  __m512 lo[1], hi[1];
  load_tile<1>(lo, hi, c, 0, s);
  row_sums<true>(a, w, k, lo[0], hi[0]);
  store_tile<1>(lo, hi, c, 0, s);
}

// A single-row product over full panels [panel_begin, panel_end) in one loop, as
// in dense_gemm_avx2.cc: one call of row() per panel paid for the tile's setup, a
// call and a return each. On an EPYC (Zen 4), 16 rounds alternating with the
// per-panel calls: rnn 0.358 -> 0.353 ms, beam (31 full panels of 1 x 128 -> 1000)
// 0.355 -> 0.342 ms, within this VM's noise but never slower; outputs
// byte-identical. The row itself reads its weights at ~108 GB/s here, the rate of
// a bare streaming loop over L2 (BM_StreamRead, ~103 GB/s). A call's share of the
// weights above kMaxPrefetchBytes (dense_gemm.h) is read without software prefetch.
template <bool kPrefetch>
SG_TARGET_AVX512 inline __attribute__((always_inline)) void full_panels(const GemmArgs& g, const float* a, float* c,
                                                                        size_t panel_begin, size_t panel_end) {
  for (size_t panel = panel_begin; panel < panel_end; ++panel) {
    __m512 lo = _mm512_setzero_ps(), hi = lo;
    row_sums<kPrefetch>(a, g.w + panel * g.k * kNR, g.k, lo, hi);
    const size_t col = panel * kNR;
    const float* bias = g.bias != nullptr ? g.bias + col : nullptr;
    _mm512_storeu_ps(c + col, finish(lo, bias, __mmask16(0xffff), g.relu));
    _mm512_storeu_ps(c + col + 16, finish(hi, bias != nullptr ? bias + 16 : nullptr, __mmask16(0xffff), g.relu));
  }
}

__attribute__((noinline)) SG_TARGET_AVX512
void row_full_panels(const GemmArgs& g, const float* a, float* c, size_t panel_begin, size_t panel_end) {
  if ((panel_end - panel_begin) * g.k * kNR * sizeof(float) > kMaxPrefetchBytes)
    full_panels<false>(g, a, c, panel_begin, panel_end);
  else
    full_panels<true>(g, a, c, panel_begin, panel_end);
}

SG_TARGET_AVX512 void rows(size_t m, const float* a, size_t lda, const float* w, size_t kc, float* c, size_t ldc,
                           const TileStore& s) {
  static_assert(kAvx512MR == 8);
  switch (m) {
    case 1: return row(a, w, kc, c, s);
    case 2: return tile<2>(a, lda, w, kc, c, ldc, s);
    case 3: return tile<3>(a, lda, w, kc, c, ldc, s);
    case 4: return tile<4>(a, lda, w, kc, c, ldc, s);
    case 5: return tile<5>(a, lda, w, kc, c, ldc, s);
    case 6: return tile<6>(a, lda, w, kc, c, ldc, s);
    case 7: return tile<7>(a, lda, w, kc, c, ldc, s);
    default: return tile<8>(a, lda, w, kc, c, ldc, s);
  }
}

__mmask16 lanes(size_t n) { return n >= 16 ? __mmask16(0xffff) : __mmask16((1u << n) - 1); }

}  // namespace

SG_TARGET_AVX512 void gemm_avx512(const GemmArgs& g, size_t row_begin, size_t row_end, size_t panel_begin,
                                  size_t panel_end) {
  if (row_end - row_begin == 1) {
    const size_t full_end = std::min(panel_end, g.n / kNR);
    if (panel_begin < full_end) {
      row_full_panels(g, g.a + row_begin * g.lda, g.c + row_begin * g.ldc, panel_begin, full_end);
      panel_begin = full_end;
    }
  }
  for (size_t p = panel_begin; p < panel_end; ++p) {
    const size_t col = p * kNR, cols = std::min(kNR, g.n - col);
    TileStore s;
    s.lo = lanes(cols);
    s.hi = lanes(cols > 16 ? cols - 16 : 0);
    s.relu = g.relu;
    s.bias = g.bias != nullptr ? g.bias + col : nullptr;
    const float* panel = g.w + p * g.k * kNR;
    if (row_end - row_begin == 1) {
      s.first = s.last = true;
      row(g.a + row_begin * g.lda, panel, g.k, g.c + row_begin * g.ldc + col, s);
      continue;
    }
    // K blocks outside, rows inside: one block of the panel stays in L1 while every
    // row tile of the task reads it.
    for (size_t k0 = 0; k0 < g.k; k0 += g.kc) {
      const size_t kc = std::min(g.kc, g.k - k0);
      s.first = k0 == 0;
      s.last = k0 + kc == g.k;
      for (size_t i = row_begin; i < row_end; i += kAvx512MR)
        rows(std::min(kAvx512MR, row_end - i), g.a + i * g.lda + k0, g.lda, panel + k0 * kNR, kc,
             g.c + i * g.ldc + col, g.ldc, s);
    }
  }
}

}  // namespace sg::kernels::xnn

#endif  // SG_SIMD_X86
