// The AVX2+FMA micro-kernels of our packed-weight GEMM (dense_gemm.h): 6 x 16
// tiles, 12 ymm accumulators of the 16 registers, two weight loads and six
// broadcasts of A per k. Every function carries the AVX2+FMA target attribute;
// nothing here runs unless the CPU has both (the caller checks).
#include "simd/dense_gemm.h"

#ifdef SG_SIMD_X86

#include <immintrin.h>

#include <algorithm>

namespace sg::kernels::xnn {
namespace {

constexpr size_t kNR = kAvx2NR;

// As in dense_gemm_avx512.cc: valid lanes, first/last K block, bias and relu.
struct TileStore {
  __m256i lo, hi;  // lane masks of the tile's two column vectors (all ones: valid)
  // All 16 columns valid: plain loads and stores. vmaskmovps costs more than the
  // store it replaces on an EPYC (Zen 3): with masks on every panel the rnn
  // benchmark's 100 x 64 -> 256 ran 68 GFLOP/s, without them on full ones 84, and
  // 64 x 512 -> 512 went 84 -> 91.
  bool full;
  bool first, last, relu;
  const float* bias;  // this panel's biases (its valid columns only), or null
};

// `mask`: the valid lanes, for a bias that ends with the panel's last column.
SG_TARGET_AVX2 inline __attribute__((always_inline)) __m256 finish(__m256 v, const float* bias, __m256i mask, bool full,
                                                                   bool relu) {
  if (bias != nullptr) v = _mm256_add_ps(v, full ? _mm256_loadu_ps(bias) : _mm256_maskload_ps(bias, mask));
  // x < 0 ? 0 : x: the compare is false for NaN, which stays NaN (NumPy's rule).
  if (relu) v = _mm256_blendv_ps(v, _mm256_setzero_ps(), _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ));
  return v;
}

template <int MR>
SG_TARGET_AVX2 inline __attribute__((always_inline)) void store_tile(__m256 (&lo)[MR], __m256 (&hi)[MR], float* c,
                                                                       size_t ldc, const TileStore& s) {
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    __m256 l = lo[r], h = hi[r];
    if (s.last) {
      l = finish(l, s.bias, s.lo, s.full, s.relu);
      h = finish(h, s.bias != nullptr ? s.bias + 8 : nullptr, s.hi, s.full, s.relu);
    }
    if (s.full) {
      _mm256_storeu_ps(c + size_t(r) * ldc, l);
      _mm256_storeu_ps(c + size_t(r) * ldc + 8, h);
    } else {
      _mm256_maskstore_ps(c + size_t(r) * ldc, s.lo, l);
      _mm256_maskstore_ps(c + size_t(r) * ldc + 8, s.hi, h);
    }
  }
}

template <int MR>
SG_TARGET_AVX2 inline __attribute__((always_inline)) void load_tile(__m256 (&lo)[MR], __m256 (&hi)[MR],
                                                                      const float* c, size_t ldc,
                                                                      const TileStore& s) {
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    if (s.first) {
      lo[r] = hi[r] = _mm256_setzero_ps();
    } else if (s.full) {
      lo[r] = _mm256_loadu_ps(c + size_t(r) * ldc);
      hi[r] = _mm256_loadu_ps(c + size_t(r) * ldc + 8);
    } else {
      lo[r] = _mm256_maskload_ps(c + size_t(r) * ldc, s.lo);
      hi[r] = _mm256_maskload_ps(c + size_t(r) * ldc + 8, s.hi);
    }
  }
}

// MR rows x 16 columns of C over kc steps of k.
// Not inlined into the driver: inlined, GCC kept the accumulators on the stack.
template <int MR>
__attribute__((noinline)) SG_TARGET_AVX2
void tile(const float* a, size_t lda, const float* w, size_t kc, float* c, size_t ldc,
                         const TileStore& s) {
  __m256 lo[MR], hi[MR];
  load_tile<MR>(lo, hi, c, ldc, s);
  const float* ar[MR];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) ar[r] = a + size_t(r) * lda;
  for (size_t p = 0; p < kc; ++p) {
    const __m256 b0 = _mm256_load_ps(w + p * kNR), b1 = _mm256_load_ps(w + p * kNR + 8);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m256 av = _mm256_broadcast_ss(ar[r] + p);
      lo[r] = _mm256_fmadd_ps(av, b0, lo[r]);
      hi[r] = _mm256_fmadd_ps(av, b1, hi[r]);
    }
  }
  store_tile<MR>(lo, hi, c, ldc, s);
}

// One row: four interleaved sums over k hide the FMA latency; `lo` and `hi` come
// in holding the tile's start (zero, or C of the K blocks before) and go out
// holding the row's sums. Each iteration asks for the cache lines kAhead bytes
// on, across the end of the panel into the next (they are contiguous): on an
// EPYC (Zen 3) the rnn benchmark (100 steps of 1 x 256 -> 256, weights from L2)
// went from 0.40 to 0.38 ms with 1 KiB ahead (2 KiB: 0.38-0.39).
// Weights beyond L2 (kMaxPrefetchBytes) are read without it.
template <bool kPrefetch>
SG_TARGET_AVX2 inline __attribute__((always_inline)) void row_sums(const float* a, const float* w, size_t kc,
                                                                   __m256& lo, __m256& hi) {
  constexpr size_t kAhead = 1024 / sizeof(float);
  __m256 l1 = _mm256_setzero_ps(), h1 = l1, l2 = l1, h2 = l1, l3 = l1, h3 = l1;
  size_t p = 0;
  for (; p + 4 <= kc; p += 4) {
    const float* q = w + p * kNR;
    if constexpr (kPrefetch) {
#pragma GCC unroll 4
      for (int line = 0; line < 4; ++line)
        _mm_prefetch(reinterpret_cast<const char*>(q + kAhead + line * 16), _MM_HINT_T0);
    }
    lo = _mm256_fmadd_ps(_mm256_broadcast_ss(a + p), _mm256_load_ps(q), lo);
    hi = _mm256_fmadd_ps(_mm256_broadcast_ss(a + p), _mm256_load_ps(q + 8), hi);
    l1 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + p + 1), _mm256_load_ps(q + 16), l1);
    h1 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + p + 1), _mm256_load_ps(q + 24), h1);
    l2 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + p + 2), _mm256_load_ps(q + 32), l2);
    h2 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + p + 2), _mm256_load_ps(q + 40), h2);
    l3 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + p + 3), _mm256_load_ps(q + 48), l3);
    h3 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + p + 3), _mm256_load_ps(q + 56), h3);
  }
  for (; p < kc; ++p) {
    lo = _mm256_fmadd_ps(_mm256_broadcast_ss(a + p), _mm256_load_ps(w + p * kNR), lo);
    hi = _mm256_fmadd_ps(_mm256_broadcast_ss(a + p), _mm256_load_ps(w + p * kNR + 8), hi);
  }
  lo = _mm256_add_ps(_mm256_add_ps(lo, l1), _mm256_add_ps(l2, l3));
  hi = _mm256_add_ps(_mm256_add_ps(hi, h1), _mm256_add_ps(h2, h3));
}

// One row of one panel: a row tile of one (m % 6 == 1), or a single-row
// product's partial last panel.
__attribute__((noinline)) SG_TARGET_AVX2
void row(const float* a, const float* w, size_t kc, float* c, const TileStore& s) {
  __m256 lo[1], hi[1];
  load_tile<1>(lo, hi, c, 0, s);
  row_sums<true>(a, w, kc, lo[0], hi[0]);
  store_tile<1>(lo, hi, c, 0, s);
}

// A single-row product over full panels [panel_begin, panel_end) in one loop,
// the panel's whole K at once: a call of row() per panel (sixteen in a
// 1 x 256 -> 256 RNN step) paid for the tile's setup, a call and a return each.
// On an EPYC (Zen 3), 16 rounds alternating with the per-panel calls: rnn
// 0.547 -> 0.523 ms, beam (62 full panels of 1 x 128 -> 1000) 0.645 -> 0.608 ms,
// outputs byte-identical (the same sums in the same order).
// A call's share of the weights above kMaxPrefetchBytes is read without software
// prefetch.
template <bool kPrefetch>
SG_TARGET_AVX2 inline __attribute__((always_inline)) void full_panels(const GemmArgs& g, const float* a, float* c,
                                                                      size_t panel_begin, size_t panel_end) {
  const __m256i all = _mm256_set1_epi32(-1);
  for (size_t panel = panel_begin; panel < panel_end; ++panel) {
    __m256 lo = _mm256_setzero_ps(), hi = lo;
    row_sums<kPrefetch>(a, g.w + panel * g.k * kNR, g.k, lo, hi);
    const size_t col = panel * kNR;
    const float* bias = g.bias != nullptr ? g.bias + col : nullptr;
    _mm256_storeu_ps(c + col, finish(lo, bias, all, true, g.relu));
    _mm256_storeu_ps(c + col + 8, finish(hi, bias != nullptr ? bias + 8 : nullptr, all, true, g.relu));
  }
}

__attribute__((noinline)) SG_TARGET_AVX2
void row_full_panels(const GemmArgs& g, const float* a, float* c, size_t panel_begin, size_t panel_end) {
  if ((panel_end - panel_begin) * g.k * kNR * sizeof(float) > kMaxPrefetchBytes)
    full_panels<false>(g, a, c, panel_begin, panel_end);
  else
    full_panels<true>(g, a, c, panel_begin, panel_end);
}

SG_TARGET_AVX2 void rows(size_t m, const float* a, size_t lda, const float* w, size_t kc, float* c, size_t ldc,
                         const TileStore& s) {
  static_assert(kAvx2MR == 6);
  switch (m) {
    case 1: return row(a, w, kc, c, s);
    case 2: return tile<2>(a, lda, w, kc, c, ldc, s);
    case 3: return tile<3>(a, lda, w, kc, c, ldc, s);
    case 4: return tile<4>(a, lda, w, kc, c, ldc, s);
    case 5: return tile<5>(a, lda, w, kc, c, ldc, s);
    default: return tile<6>(a, lda, w, kc, c, ldc, s);
  }
}

// All-ones in the first n lanes (n <= 8).
SG_TARGET_AVX2 __m256i lanes(size_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(std::min<size_t>(n, 8))), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

}  // namespace

SG_TARGET_AVX2 void gemm_avx2(const GemmArgs& g, size_t row_begin, size_t row_end, size_t panel_begin,
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
    s.hi = lanes(cols > 8 ? cols - 8 : 0);
    s.full = cols == kNR;
    s.relu = g.relu;
    s.bias = g.bias != nullptr ? g.bias + col : nullptr;
    const float* panel = g.w + p * g.k * kNR;
    if (row_end - row_begin == 1) {
      s.first = s.last = true;
      row(g.a + row_begin * g.lda, panel, g.k, g.c + row_begin * g.ldc + col, s);
      continue;
    }
    for (size_t k0 = 0; k0 < g.k; k0 += g.kc) {
      const size_t kc = std::min(g.kc, g.k - k0);
      s.first = k0 == 0;
      s.last = k0 + kc == g.k;
      for (size_t i = row_begin; i < row_end; i += kAvx2MR)
        rows(std::min(kAvx2MR, row_end - i), g.a + i * g.lda + k0, g.lda, panel + k0 * kNR, kc,
             g.c + i * g.ldc + col, g.ldc, s);
    }
  }
}

}  // namespace sg::kernels::xnn

#endif  // SG_SIMD_X86
