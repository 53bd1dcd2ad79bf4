// The SIMD kernels of dynamic_gemm.h (x86-64): AVX2 and AVX-512 VNNI, each in a
// target region of its own and picked at run time by what the CPU reports.
//
// A tile is MR rows x NP panels; its int32 sums live in registers for a K block
// (int8: all of K), then are scaled. AVX2 multiplies pairs of K: 16 weights of a
// step (8 columns x 2 K) sign-extended to int16 (vpmovsxbw) against the row's two
// int16 activations broadcast (vpmaddwd: exact, unlike vpmaddubsw's saturating int16
// sums). VNNI multiplies quadruples: the activations as uint8 (q + 128) against the
// int8 weights (vpdpbusd), less 128 x the block's weight sum per column.
#if defined(__x86_64__) && defined(__GNUC__)

#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmath>
#include <cstring>

#include "quant/dynamic_gemm.h"
#include "quant/x86_util.h"

#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace sg::kernels::quant::detail {
namespace {

}  // namespace

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif
namespace avx2 {
namespace {

// Weights of one step for one panel: 16 int16 for K pair (0, 1) and for (2, 3).
template <bool I4>
SG_QUANT_INLINE void weights(const uint8_t* w, __m256i* w0, __m256i* w1) {
  if constexpr (I4) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w));
    const __m128i mask = _mm_set1_epi8(0x0F), eight = _mm_set1_epi8(8);
    const __m128i lo = _mm_sub_epi8(_mm_xor_si128(_mm_and_si128(x, mask), eight), eight);
    const __m128i hi = _mm_sub_epi8(_mm_xor_si128(_mm_and_si128(_mm_srli_epi16(x, 4), mask), eight), eight);
    *w0 = _mm256_cvtepi8_epi16(lo);
    *w1 = _mm256_cvtepi8_epi16(hi);
  } else {
    *w0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
    *w1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 16)));
  }
}

SG_QUANT_INLINE void store(float* c, size_t col, size_t n, __m256 v, const Epilogue& e) {
  const bool whole = col + 8 <= n;
  if (e.bias != nullptr) {
    alignas(32) float b[8] = {};
    for (size_t i = 0; !whole && col + i < n; ++i) b[i] = e.bias[col + i];
    v = _mm256_add_ps(v, whole ? _mm256_loadu_ps(e.bias + col) : _mm256_load_ps(b));
  }
  if (e.relu) {
    const __m256 zero = _mm256_setzero_ps();
    v = _mm256_blendv_ps(v, zero, _mm256_cmp_ps(v, zero, _CMP_LT_OQ));
  }
  if (whole) {
    _mm256_storeu_ps(c + col, v);
  } else {
    alignas(32) float t[8];
    _mm256_store_ps(t, v);
    for (size_t i = 0; col + i < n; ++i) c[col + i] = t[i];
  }
}

template <int MR, int NP, bool I4>
__attribute__((noinline)) void tile(const PackedWeights& p, const QuantizedRows& q, float* c, size_t row,
                                    size_t panel, const Epilogue& e) {
  constexpr size_t kStep = I4 ? 16 : 32;
  const size_t steps = p.block_pad / 4, stride = p.blocks * p.block_pad, npad = p.panels * 8;
  const uint8_t* wp[NP];
#pragma GCC unroll 8
  for (int j = 0; j < NP; ++j) wp[j] = p.data.data() + (panel + size_t(j)) * p.panel_bytes;
  const int16_t* ar[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) ar[r] = q.a16.data() + (row + size_t(r)) * stride;
  __m256 accf[MR][NP];
  __m256i acc[MR][NP];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int j = 0; j < NP; ++j) accf[r][j] = _mm256_setzero_ps();
  for (size_t b = 0; b < p.blocks; ++b) {
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
      for (int j = 0; j < NP; ++j) acc[r][j] = _mm256_setzero_si256();
    const size_t a0 = b * p.block_pad;
    for (size_t t = 0; t < steps; ++t) {
#pragma GCC unroll 8
      for (int j = 0; j < NP; ++j) {
        __m256i w0, w1;
        weights<I4>(wp[j], &w0, &w1);
        wp[j] += kStep;
#pragma GCC unroll 8
        for (int r = 0; r < MR; ++r) {
          const __m256i x0 = _mm256_set1_epi32(load32(ar[r] + a0 + 4 * t));
          const __m256i x1 = _mm256_set1_epi32(load32(ar[r] + a0 + 4 * t + 2));
          acc[r][j] = _mm256_add_epi32(acc[r][j],
                                       _mm256_add_epi32(_mm256_madd_epi16(w0, x0), _mm256_madd_epi16(w1, x1)));
        }
      }
    }
    if constexpr (I4) {
#pragma GCC unroll 8
      for (int j = 0; j < NP; ++j) {
        const __m256 s = _mm256_loadu_ps(p.scales.data() + b * npad + (panel + size_t(j)) * 8);
#pragma GCC unroll 8
        for (int r = 0; r < MR; ++r) accf[r][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc[r][j]), s, accf[r][j]);
      }
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < NP; ++j) {
    const size_t col = (panel + size_t(j)) * 8;
    const __m256 sw = _mm256_loadu_ps(p.scales.data() + col);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m256 sa = _mm256_set1_ps(q.scale[row + size_t(r)]);
      const __m256 v = I4 ? _mm256_mul_ps(accf[r][j], sa)
                          : _mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(acc[r][j]), sa), sw);
      store(c + (row + size_t(r)) * p.n, col, p.n, v, e);
    }
  }
}

// int4: two steps (8 K x 8 columns) per 32 bytes of unsigned nibbles, vpmaddubsw
// against the int8 activations, up to 4 such products summed in int16, then
// vpmaddwd by 1 into int32 (the 4 K of each column side by side).
template <int MR, int NP>
__attribute__((noinline)) void tile_u4(const PackedWeights& p, const QuantizedRows& q, float* c, size_t row,
                                       size_t panel, const Epilogue& e) {
  const size_t steps = p.block_pad / 4, stride = p.blocks * p.block_pad, npad = p.panels * 8;
  const __m256i mask = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
  const uint8_t* wp[NP];
#pragma GCC unroll 8
  for (int j = 0; j < NP; ++j) wp[j] = p.data.data() + (panel + size_t(j)) * p.panel_bytes;
  const uint8_t* ar[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) ar[r] = q.a8.data() + (row + size_t(r)) * stride;
  __m256 accf[MR][NP];
  __m256i acc[MR][NP], acc16[MR][NP];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int j = 0; j < NP; ++j) accf[r][j] = _mm256_setzero_ps();
  for (size_t b = 0; b < p.blocks; ++b) {
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
      for (int j = 0; j < NP; ++j) acc[r][j] = _mm256_setzero_si256();
    const size_t a0 = b * p.block_pad;
    for (size_t t0 = 0; t0 < steps; t0 += 8) {
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
        for (int j = 0; j < NP; ++j) acc16[r][j] = _mm256_setzero_si256();
      const size_t t1 = t0 + 8 < steps ? t0 + 8 : steps;
      for (size_t t = t0; t < t1; t += 2) {
#pragma GCC unroll 8
        for (int j = 0; j < NP; ++j) {
          const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wp[j]));
          wp[j] += 32;
          const __m256i lo = _mm256_and_si256(x, mask), hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), mask);
#pragma GCC unroll 8
          for (int r = 0; r < MR; ++r) {
            const __m256i xa = _mm256_set1_epi32(load32(ar[r] + a0 + 4 * t));
            const __m256i xb = _mm256_set1_epi32(load32(ar[r] + a0 + 4 * t + 4));
            acc16[r][j] = _mm256_add_epi16(
                acc16[r][j], _mm256_add_epi16(_mm256_maddubs_epi16(lo, xa), _mm256_maddubs_epi16(hi, xb)));
          }
        }
      }
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
        for (int j = 0; j < NP; ++j) acc[r][j] = _mm256_add_epi32(acc[r][j], _mm256_madd_epi16(acc16[r][j], ones));
    }
#pragma GCC unroll 8
    for (int j = 0; j < NP; ++j) {
      const __m256 s = _mm256_loadu_ps(p.scales.data() + b * npad + (panel + size_t(j)) * 8);
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        const __m256i off = _mm256_set1_epi32(q.offset[(row + size_t(r)) * p.blocks + b]);
        accf[r][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(acc[r][j], off)), s, accf[r][j]);
      }
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < NP; ++j) {
    const size_t col = (panel + size_t(j)) * 8;
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r)
      store(c + (row + size_t(r)) * p.n, col, p.n, _mm256_mul_ps(accf[r][j], _mm256_set1_ps(q.scale[row + size_t(r)])), e);
  }
}

template <int MR, int NP, bool I4>
void panels(const PackedWeights& p, const QuantizedRows& q, float* c, size_t row, size_t pb, size_t pe,
            const Epilogue& e) {
  size_t pan = pb;
  if constexpr (I4) {
    for (; pan + NP <= pe; pan += NP) tile_u4<MR, NP>(p, q, c, row, pan, e);
    for (; pan < pe; ++pan) tile_u4<MR, 1>(p, q, c, row, pan, e);
  } else {
    for (; pan + NP <= pe; pan += NP) tile<MR, NP, I4>(p, q, c, row, pan, e);
    for (; pan < pe; ++pan) tile<MR, 1, I4>(p, q, c, row, pan, e);
  }
}

template <bool I4>
void run(const PackedWeights& p, const QuantizedRows& q, size_t m, float* c, size_t pb, size_t pe, const Epilogue& e) {
  size_t row = 0;
  for (; row + 4 <= m; row += 4) panels<4, 2, I4>(p, q, c, row, pb, pe, e);
  switch (m - row) {
    case 3: panels<3, 2, I4>(p, q, c, row, pb, pe, e); break;
    case 2: panels<2, 2, I4>(p, q, c, row, pb, pe, e); break;
    case 1: panels<1, 4, I4>(p, q, c, row, pb, pe, e); break;
    default: break;
  }
}

}  // namespace
}  // namespace avx2

bool quantize_row_avx2(const float* a, size_t k, int8_t* q, float* scale) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  __m256 vmax = _mm256_setzero_ps(), nan = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 8 <= k; i += 8) {
    const __m256 x = _mm256_loadu_ps(a + i);
    vmax = _mm256_max_ps(vmax, _mm256_and_ps(x, abs_mask));
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, vmax);
  float amax = 0.0f;
  for (float v : lanes) amax = v > amax ? v : amax;
  bool bad = _mm256_movemask_ps(nan) != 0;
  for (; i < k; ++i) {
    const float v = std::fabs(a[i]);
    bad = bad || std::isnan(v);
    amax = v > amax ? v : amax;
  }
  const float inv = 127.0f / amax;
  if (bad || !std::isfinite(amax) || (amax > 0.0f && !std::isfinite(inv))) {
    std::memset(q, 0, k);
    *scale = 0.0f;
    return false;
  }
  if (amax == 0.0f) {
    std::memset(q, 0, k);
    *scale = 0.0f;
    return true;
  }
  *scale = amax / 127.0f;
  const __m256 vinv = _mm256_set1_ps(inv);
  const __m256i lo = _mm256_set1_epi32(-127), hi = _mm256_set1_epi32(127);
  i = 0;
  for (; i + 8 <= k; i += 8) {
    // cvtps rounds to nearest even under the default rounding mode (as nearbyint).
    __m256i v = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(a + i), vinv));
    v = _mm256_min_epi32(_mm256_max_epi32(v, lo), hi);
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q + i), _mm_packs_epi16(w, w));
  }
  for (; i < k; ++i) {
    float v = std::nearbyint(a[i] * inv);
    v = v < -127.0f ? -127.0f : (v > 127.0f ? 127.0f : v);
    q[i] = int8_t(v);
  }
  return true;
}

// AVX-VNNI (vpdpbusd on 256 bits, VEX-encoded), for CPUs that have it without
// AVX-512: VNNI's int8 kernel on panels of 8 columns, the activations as q + 128
// against the int8 weights, 128 x each column's sum taken back.
namespace avxvnni {
namespace {

template <int MR, int NP>
__attribute__((noinline, target("avx2,fma,avxvnni"))) void tile(const PackedWeights& p, const QuantizedRows& q,
                                                                float* c, size_t row, size_t panel,
                                                                const Epilogue& e) {
  const size_t steps = p.block_pad / 4, stride = q.stride;
  const uint8_t* wp[NP];
#pragma GCC unroll 8
  for (int j = 0; j < NP; ++j) wp[j] = p.data.data() + (panel + size_t(j)) * p.panel_bytes;
  const uint8_t* ar[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) ar[r] = q.a8.data() + (row + size_t(r)) * stride;
  __m256i acc[MR][NP];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int j = 0; j < NP; ++j) acc[r][j] = _mm256_setzero_si256();
  for (size_t t = 0; t < steps; ++t) {
#pragma GCC unroll 8
    for (int j = 0; j < NP; ++j) {
      const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wp[j]));
      wp[j] += 32;
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r)
        acc[r][j] = _mm256_dpbusd_avx_epi32(acc[r][j], _mm256_set1_epi32(load32(ar[r] + 4 * t)), w);
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < NP; ++j) {
    const size_t col = (panel + size_t(j)) * 8;
    const __m256i off = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.colsum.data() + col));
    const __m256 sw = _mm256_loadu_ps(p.scales.data() + col);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m256 sa = _mm256_set1_ps(q.scale[row + size_t(r)]);
      const __m256 v = _mm256_mul_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(acc[r][j], off)), sa), sw);
      avx2::store(c + (row + size_t(r)) * p.n, col, p.n, v, e);
    }
  }
}

template <int MR, int NP>
void panels(const PackedWeights& p, const QuantizedRows& q, float* c, size_t row, size_t pb, size_t pe,
            const Epilogue& e) {
  size_t pan = pb;
  for (; pan + NP <= pe; pan += NP) tile<MR, NP>(p, q, c, row, pan, e);
  for (; pan < pe; ++pan) tile<MR, 1>(p, q, c, row, pan, e);
}

}  // namespace
}  // namespace avxvnni

void dyn_avxvnni(const PackedWeights& p, const QuantizedRows& rows, size_t m, float* c, size_t panel_begin,
                 size_t panel_end, const Epilogue& e) {
  size_t row = 0;
  for (; row + 4 <= m; row += 4) avxvnni::panels<4, 3>(p, rows, c, row, panel_begin, panel_end, e);
  switch (m - row) {
    case 3: avxvnni::panels<3, 3>(p, rows, c, row, panel_begin, panel_end, e); break;
    case 2: avxvnni::panels<2, 4>(p, rows, c, row, panel_begin, panel_end, e); break;
    case 1: avxvnni::panels<1, 4>(p, rows, c, row, panel_begin, panel_end, e); break;
    default: break;
  }
}

bool cpu_avxvnni() {
  static const bool yes = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid_count(7, 1, &a, &b, &c, &d) == 0) return false;
    return ((a >> 4) & 1) != 0 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return yes;
}

void dyn_avx2(const PackedWeights& p, const QuantizedRows& rows, size_t m, float* c, size_t panel_begin,
              size_t panel_end, const Epilogue& e) {
  if (p.storage == Storage::kInt4) avx2::run<true>(p, rows, m, c, panel_begin, panel_end, e);
  else avx2::run<false>(p, rows, m, c, panel_begin, panel_end, e);
}

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma"))), \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma")
#endif
namespace vnni {
namespace {

SG_QUANT_AVX512_STORE

// int8: the activations as q + 128 (the unsigned operand) against the int8 weights,
// the 128 x column sums taken back per block.
template <int MR, int NP>
__attribute__((noinline)) void tile(const PackedWeights& p, const QuantizedRows& q, float* c, size_t row,
                                    size_t panel, const Epilogue& e) {
  const size_t steps = p.block_pad / 4, stride = q.stride;
  const uint8_t* wp[NP];
#pragma GCC unroll 8
  for (int j = 0; j < NP; ++j) wp[j] = p.data.data() + (panel + size_t(j)) * p.panel_bytes;
  const uint8_t* ar[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) ar[r] = q.a8.data() + (row + size_t(r)) * stride;
  __m512i acc[MR][NP];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int j = 0; j < NP; ++j) acc[r][j] = _mm512_setzero_si512();
  for (size_t t = 0; t < steps; ++t) {
#pragma GCC unroll 8
    for (int j = 0; j < NP; ++j) {
      // One row streams its panels from L2: fetch ahead of the hardware prefetcher.
      if constexpr (MR == 1) _mm_prefetch(reinterpret_cast<const char*>(wp[j]) + 512, _MM_HINT_T0);
      const __m512i w = _mm512_loadu_si512(wp[j]);
      wp[j] += 64;
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r)
        acc[r][j] = _mm512_dpbusd_epi32(acc[r][j], _mm512_set1_epi32(load32(ar[r] + 4 * t)), w);
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < NP; ++j) {
    const size_t col = (panel + size_t(j)) * 16;
    const __m512i off = _mm512_loadu_si512(p.colsum.data() + col);
    const __m512 sw = _mm512_loadu_ps(p.scales.data() + col);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512 sa = _mm512_set1_ps(q.scale[row + size_t(r)]);
      __m512 v = _mm512_mul_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(acc[r][j], off)), sa), sw);
      store(c + (row + size_t(r)) * p.n, col, p.n, v, e);
    }
  }
}

// int4: the weights as unsigned nibbles w + 8 (the unsigned operand; two steps per
// 64 bytes, step t low, t + 1 high) against the signed activations, 8 x each
// block's activation sum taken back per row and block.
template <int MR, int NP>
__attribute__((noinline)) void tile_u4(const PackedWeights& p, const QuantizedRows& q, float* c, size_t row,
                                       size_t panel, const Epilogue& e) {
  const size_t steps = p.block_pad / 4, stride = q.stride, npad = p.panels * 16;
  const __m512i mask = _mm512_set1_epi8(0x0F);
  const uint8_t* wp[NP];
#pragma GCC unroll 8
  for (int j = 0; j < NP; ++j) wp[j] = p.data.data() + (panel + size_t(j)) * p.panel_bytes;
  const uint8_t* ar[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) ar[r] = q.a8.data() + (row + size_t(r)) * stride;
  __m512 accf[MR][NP];
  __m512i acc[MR][NP];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int j = 0; j < NP; ++j) accf[r][j] = _mm512_setzero_ps();
  for (size_t b = 0; b < p.blocks; ++b) {
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
      for (int j = 0; j < NP; ++j) acc[r][j] = _mm512_setzero_si512();
    const size_t a0 = b * p.block_pad;
    for (size_t t = 0; t < steps; t += 2) {
#pragma GCC unroll 8
      for (int j = 0; j < NP; ++j) {
        const __m512i x = _mm512_loadu_si512(wp[j]);
        wp[j] += 64;
        const __m512i lo = _mm512_and_si512(x, mask), hi = _mm512_and_si512(_mm512_srli_epi16(x, 4), mask);
#pragma GCC unroll 8
        for (int r = 0; r < MR; ++r) {
          acc[r][j] = _mm512_dpbusd_epi32(acc[r][j], lo, _mm512_set1_epi32(load32(ar[r] + a0 + 4 * t)));
          acc[r][j] = _mm512_dpbusd_epi32(acc[r][j], hi, _mm512_set1_epi32(load32(ar[r] + a0 + 4 * t + 4)));
        }
      }
    }
#pragma GCC unroll 8
    for (int j = 0; j < NP; ++j) {
      const __m512 s = _mm512_loadu_ps(p.scales.data() + b * npad + (panel + size_t(j)) * 16);
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        const __m512i off = _mm512_set1_epi32(q.offset[(row + size_t(r)) * p.blocks + b]);
        accf[r][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(acc[r][j], off)), s, accf[r][j]);
      }
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < NP; ++j) {
    const size_t col = (panel + size_t(j)) * 16;
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r)
      store(c + (row + size_t(r)) * p.n, col, p.n, _mm512_mul_ps(accf[r][j], _mm512_set1_ps(q.scale[row + size_t(r)])),
            e);
  }
}

template <int MR, int NP, bool I4>
void panels(const PackedWeights& p, const QuantizedRows& q, float* c, size_t row, size_t pb, size_t pe,
            const Epilogue& e) {
  size_t pan = pb;
  if constexpr (I4) {
    for (; pan + NP <= pe; pan += NP) tile_u4<MR, NP>(p, q, c, row, pan, e);
    for (; pan < pe; ++pan) tile_u4<MR, 1>(p, q, c, row, pan, e);
  } else {
    for (; pan + NP <= pe; pan += NP) tile<MR, NP>(p, q, c, row, pan, e);
    for (; pan < pe; ++pan) tile<MR, 1>(p, q, c, row, pan, e);
  }
}

template <bool I4>
void run(const PackedWeights& p, const QuantizedRows& q, size_t m, float* c, size_t pb, size_t pe, const Epilogue& e) {
  size_t row = 0;
  if (p.amx && m >= 16) {  // whole blocks of 16 rows on AMX tiles, the rest below
    dyn_amx_rows(p, q, 0, m / 16, c, pb, pe, e);
    row = m / 16 * 16;
  }
  for (; row + 4 <= m; row += 4) panels<4, I4 ? 2 : 3, I4>(p, q, c, row, pb, pe, e);
  switch (m - row) {
    case 3: panels<3, 2, I4>(p, q, c, row, pb, pe, e); break;
    case 2: panels<2, 2, I4>(p, q, c, row, pb, pe, e); break;
    case 1: panels<1, 4, I4>(p, q, c, row, pb, pe, e); break;
    default: break;
  }
}

}  // namespace
}  // namespace vnni

// quantize_row's arithmetic (amax, inv = 127 / amax, clamp(rint(a * inv))), written
// as VNNI reads it, 16 at a time: q + 128 as a byte (q with its top bit flipped) for
// int8, q itself for int4, with each block's sum of q (blocks a multiple of 16).
bool quantize_row_avx512(const float* a, size_t k, uint8_t* dst, bool flip, size_t block, int32_t* block_sums,
                         float* scale) {
  __m512 vmax = _mm512_setzero_ps();
  __mmask16 nan = 0;
  for (size_t i = 0; i < k; i += 16) {
    const __mmask16 live = k - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (k - i)) - 1);
    const __m512 x = _mm512_maskz_loadu_ps(live, a + i);
    vmax = _mm512_max_ps(vmax, _mm512_abs_ps(x));
    nan = __mmask16(nan | _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q));
  }
  const float amax = _mm512_reduce_max_ps(vmax);
  const float inv = 127.0f / amax;
  const bool bad = nan != 0 || !std::isfinite(amax) || (amax > 0.0f && !std::isfinite(inv));
  if (bad || amax == 0.0f) {
    std::memset(dst, flip ? 128 : 0, k);
    if (block_sums != nullptr) std::memset(block_sums, 0, k / block * sizeof(int32_t));
    *scale = 0.0f;
    return !bad;
  }
  *scale = amax / 127.0f;
  const __m512 vinv = _mm512_set1_ps(inv);
  const __m512i lo = _mm512_set1_epi32(-127), hi = _mm512_set1_epi32(127);
  const __m128i bits = _mm_set1_epi8(flip ? char(0x80) : char(0));
  __m512i sum = _mm512_setzero_si512();
  for (size_t i = 0; i < k; i += 16) {
    const __mmask16 live = k - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (k - i)) - 1);
    // cvtps rounds to nearest even under the default rounding mode (as nearbyint).
    __m512i v = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_maskz_loadu_ps(live, a + i), vinv));
    v = _mm512_min_epi32(_mm512_max_epi32(v, lo), hi);
    _mm_mask_storeu_epi8(dst + i, live, _mm_xor_si128(_mm512_cvtepi32_epi8(v), bits));
    if (block_sums != nullptr) {
      sum = _mm512_add_epi32(sum, v);
      if ((i + 16) % block == 0) {
        block_sums[i / block] = _mm512_reduce_add_epi32(sum);
        sum = _mm512_setzero_si512();
      }
    }
  }
  return true;
}

void gather_patches_avx512(const PackedWeights& p, const PatchGeometry& g, const uint8_t* image, uint8_t* dst,
                           size_t stride) {
  const size_t c = size_t(g.c), run = size_t(g.kw) * c;
  const __m512i outside = _mm512_set1_epi8(char(0x80)), zero = _mm512_setzero_si512();
  // The row's end from K: 128 to the block's end, zeros after (block_pad - k < 4).
  const __m512i tail = _mm512_maskz_mov_epi8((__mmask64(1) << (p.block_pad - p.k)) - 1, outside);
  // Whole vectors: a copy writes up to 63 bytes past its run, which what follows in
  // the row (or the next row, or the buffer's slack) writes over.
  const auto copy = [](uint8_t* to, const uint8_t* from, size_t n) {
    for (size_t i = 0; i < n; i += 64) _mm512_storeu_si512(to + i, _mm512_loadu_si512(from + i));
  };
  const auto fill = [](uint8_t* to, __m512i v, size_t n) {
    for (size_t i = 0; i < n; i += 64) _mm512_storeu_si512(to + i, v);
  };
  for (int64_t oy = 0; oy < g.oh; ++oy)
    for (int64_t ox = 0; ox < g.ow; ++ox, dst += stride) {
      const int64_t x0 = ox * g.sx - g.px;
      const bool whole = g.dx == 1 && x0 >= 0 && x0 + g.kw <= g.w;
      uint8_t* out = dst;
      for (int64_t i = 0; i < g.kh; ++i, out += run) {
        const int64_t iy = oy * g.sy + i * g.dy - g.py;
        const uint8_t* line = image + iy * g.w * int64_t(c);
        if (iy < 0 || iy >= g.h) {
          fill(out, outside, run);
        } else if (whole) {
          copy(out, line + x0 * int64_t(c), run);
        } else {
          for (int64_t j = 0; j < g.kw; ++j) {
            const int64_t ix = x0 + j * g.dx;
            if (ix < 0 || ix >= g.w) fill(out + j * c, outside, c);
            else copy(out + j * c, line + ix * int64_t(c), c);
          }
        }
      }
      _mm512_storeu_si512(dst + p.k, tail);
      if (stride > p.k + 64) fill(dst + p.k + 64, zero, stride - p.k - 64);
    }
}

void dyn_avx512vnni(const PackedWeights& p, const QuantizedRows& rows, size_t m, float* c, size_t panel_begin,
                    size_t panel_end, const Epilogue& e) {
  if (p.storage == Storage::kInt4) vnni::run<true>(p, rows, m, c, panel_begin, panel_end, e);
  else vnni::run<false>(p, rows, m, c, panel_begin, panel_end, e);
}

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif


// ---- AMX ---------------------------------------------------------------------------
// Rows in blocks of 16 on AMX tiles: C (16 x 16 int32) += A (16 rows x 64 uint8, the
// activations + 128) . B (16 steps x 64 bytes: 16 columns x 4 K, the VNNI panel's
// layout), tdpbusd exact in int32 as vpdpbusd; then the VNNI tile's epilogue.

bool amx_ready() {
  static const bool ready = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    __cpuid_count(7, 0, a, b, c, d);
    const bool tile = (d >> 24) & 1, int8 = (d >> 25) & 1;
    if (!tile || !int8) return false;
    constexpr long kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return ready;
}

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("amx-tile,amx-int8,avx512f,avx512bw,avx512vl,avx2,fma"))), \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("amx-tile,amx-int8,avx512f,avx512bw,avx512vl,avx2,fma")
#endif
namespace {

SG_QUANT_AVX512_STORE

struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// C tiles 0-3 (row block r, panel j at 2r + j), A tiles 4-5, B tiles 6-7.
template <int RB, int PB>
void amx_block(const PackedWeights& p, const QuantizedRows& q, size_t row, size_t panel, int32_t (*out)[16][16]) {
  const size_t chunks = q.stride / 64;
  _tile_zero(0);
  if constexpr (PB > 1) _tile_zero(1);
  if constexpr (RB > 1) _tile_zero(2);
  if constexpr (RB > 1 && PB > 1) _tile_zero(3);
  const uint8_t* a = q.a8.data() + row * q.stride;
  const uint8_t* b = p.data.data() + panel * p.panel_bytes;
  for (size_t ch = 0; ch < chunks; ++ch) {
    _tile_loadd(4, a + 64 * ch, long(q.stride));
    if constexpr (RB > 1) _tile_loadd(5, a + 16 * q.stride + 64 * ch, long(q.stride));
    _tile_loadd(6, b + 16 * 64 * ch, 64);
    if constexpr (PB > 1) _tile_loadd(7, b + p.panel_bytes + 16 * 64 * ch, 64);
    _tile_dpbusd(0, 4, 6);
    if constexpr (PB > 1) _tile_dpbusd(1, 4, 7);
    if constexpr (RB > 1) _tile_dpbusd(2, 5, 6);
    if constexpr (RB > 1 && PB > 1) _tile_dpbusd(3, 5, 7);
  }
  _tile_stored(0, out[0], 64);
  if constexpr (PB > 1) _tile_stored(1, out[1], 64);
  if constexpr (RB > 1) _tile_stored(2, out[2], 64);
  if constexpr (RB > 1 && PB > 1) _tile_stored(3, out[3], 64);
}

void amx_epilogue(const PackedWeights& p, const QuantizedRows& q, const int32_t (*sums)[16], size_t row, size_t panel,
                  float* c, const Epilogue& e) {
  const size_t col = panel * 16;
  const __m512i off = _mm512_loadu_si512(p.colsum.data() + col);
  const __m512 sw = _mm512_loadu_ps(p.scales.data() + col);
  for (size_t r = 0; r < 16; ++r) {
    const __m512 sa = _mm512_set1_ps(q.scale[row + r]);
    const __m512i acc = _mm512_loadu_si512(sums[r]);
    store(c + (row + r) * p.n, col, p.n,
          _mm512_mul_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(acc, off)), sa), sw), e);
  }
}

}  // namespace

void dyn_amx_rows(const PackedWeights& p, const QuantizedRows& q, size_t row, size_t blocks16, float* c, size_t pb,
                  size_t pe, const Epilogue& e) {
  TileConfig cfg;
  for (int t = 0; t < 8; ++t) {
    cfg.colsb[t] = 64;
    cfg.rows[t] = 16;
  }
  _tile_loadconfig(&cfg);
  alignas(64) int32_t sums[4][16][16];
  const size_t end = row + 16 * blocks16;
  for (; row < end; row += 32) {
    const bool two = row + 32 <= end;
    for (size_t pan = pb; pan < pe; pan += 2) {
      const bool pair = pan + 2 <= pe;
      if (two && pair) amx_block<2, 2>(p, q, row, pan, sums);
      else if (two) amx_block<2, 1>(p, q, row, pan, sums);
      else if (pair) amx_block<1, 2>(p, q, row, pan, sums);
      else amx_block<1, 1>(p, q, row, pan, sums);
      for (size_t rb = 0; rb < (two ? 2u : 1u); ++rb)
        for (size_t j = 0; j < (pair ? 2u : 1u); ++j)
          amx_epilogue(p, q, sums[2 * rb + j], row + 16 * rb, pan + j, c, e);
    }
  }
  _tile_release();
}

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

}  // namespace sg::kernels::quant::detail

#endif
