// The SIMD kernel of dynamic_gemm.h on aarch64: NEON dot product (sdot, FEAT_DotProd,
// optional from Armv8.2-A), picked at run time when the CPU reports it. This file
// alone is compiled with -march=armv8.2-a+dotprod and -ffp-contract=off
// (kernels/CMakeLists.txt): the rest of the build stays baseline Armv8-A, and no
// a*b+c here is fused unless written as vfmaq (the scales' order is the reference's).
//
// A tile is MR rows x NP panels of 16 columns, the layout VNNI's: a step is 4 K x
// 16 columns, the 4 K of a column adjacent, so one sdot lane multiplies a column's 4
// weights by the row's 4 activations, signed x signed (no offset, no column sums).
// The activations are loaded 16 at a time (4 steps) and taken lane by lane
// (vdotq_laneq_s32). int4 stays 4 bits a weight: the signed nibbles are widened in
// the kernel (shift left 4, then arithmetic shift right 4; the high nibble: the
// arithmetic shift alone). The int32 sums live in registers for a K block (int8: all
// of K), then are scaled, and the epilogue (bias, relu) is applied in the store.
#if defined(__aarch64__) && defined(__GNUC__)

#ifndef __ARM_FEATURE_DOTPROD
#error "dynamic_gemm_neon.cc is compiled with -march=armv8.2-a+dotprod (kernels/CMakeLists.txt)"
#endif

#include <arm_neon.h>

#include <cstring>

#include "quant/dynamic_gemm.h"

#define SG_DQ_INLINE inline __attribute__((always_inline))

namespace sg::kernels::quant::detail {
namespace {

// One step of one panel: columns 0-3, 4-7, 8-11, 12-15, 4 K each.
struct Step {
  int8x16_t v[4];
};

template <bool I4>
SG_DQ_INLINE Step weights(const int8_t* w) {
  Step s;
  if constexpr (I4) {
    // Element j (column j / 4) in the low nibble of byte j, element j + 32 in its high one.
    const int8x16_t x0 = vld1q_s8(w), x1 = vld1q_s8(w + 16);
    s.v[0] = vshrq_n_s8(vshlq_n_s8(x0, 4), 4);
    s.v[1] = vshrq_n_s8(vshlq_n_s8(x1, 4), 4);
    s.v[2] = vshrq_n_s8(x0, 4);
    s.v[3] = vshrq_n_s8(x1, 4);
  } else {
    for (int g = 0; g < 4; ++g) s.v[g] = vld1q_s8(w + 16 * g);
  }
  return s;
}

// Step L of the 4 whose activations are in a[r]: every panel, every row.
template <int L, int MR, int NP, bool I4>
SG_DQ_INLINE void dot_step(const int8_t* (&wp)[NP], const int8x16_t (&a)[MR], int32x4_t (&acc)[MR][NP][4]) {
  constexpr size_t kStep = I4 ? 32 : 64;
#pragma GCC unroll 8
  for (int j = 0; j < NP; ++j) {
    const Step w = weights<I4>(wp[j]);
    wp[j] += kStep;
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int g = 0; g < 4; ++g) acc[r][j][g] = vdotq_laneq_s32(acc[r][j][g], w.v[g], a[r], L);
  }
}

// Columns [col, col + 4) of one row of C (those below n): v + bias, then relu as
// `v < 0 ? 0 : v` (NaN and -0 stay), as the unfused nodes compute it.
SG_DQ_INLINE void store(float* c, size_t col, size_t n, float32x4_t v, const Epilogue& e) {
  if (col >= n) return;
  const bool whole = col + 4 <= n;
  if (e.bias != nullptr) {
    float b[4] = {};
    for (size_t i = 0; !whole && col + i < n; ++i) b[i] = e.bias[col + i];
    v = vaddq_f32(v, vld1q_f32(whole ? e.bias + col : b));
  }
  if (e.relu) {
    const float32x4_t zero = vdupq_n_f32(0.0f);
    v = vbslq_f32(vcltq_f32(v, zero), zero, v);
  }
  if (whole) {
    vst1q_f32(c + col, v);
  } else {
    float t[4];
    vst1q_f32(t, v);
    for (size_t i = 0; col + i < n; ++i) c[col + i] = t[i];
  }
}

template <int MR, int NP, bool I4>
__attribute__((noinline)) void tile(const PackedWeights& p, const QuantizedRows& q, float* c, size_t row,
                                    size_t panel, const Epilogue& e) {
  const size_t steps = p.block_pad / 4, stride = q.stride, npad = p.panels * 16;
  const int8_t* w0 = reinterpret_cast<const int8_t*>(p.data.data());
  const int8_t* wp[NP];
#pragma GCC unroll 8
  for (int j = 0; j < NP; ++j) wp[j] = w0 + (panel + size_t(j)) * p.panel_bytes;
  const int8_t* ar[MR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) ar[r] = reinterpret_cast<const int8_t*>(q.a8.data()) + (row + size_t(r)) * stride;
  float32x4_t accf[MR][NP][4];
  int32x4_t acc[MR][NP][4];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int j = 0; j < NP; ++j)
#pragma GCC unroll 4
      for (int g = 0; g < 4; ++g) {
        accf[r][j][g] = vdupq_n_f32(0.0f);
        acc[r][j][g] = vdupq_n_s32(0);
      }
  int8x16_t a[MR];
  for (size_t b = 0; b < p.blocks; ++b) {
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
      for (int j = 0; j < NP; ++j)
#pragma GCC unroll 4
        for (int g = 0; g < 4; ++g) acc[r][j][g] = vdupq_n_s32(0);
    const size_t a0 = b * p.block_pad;
    size_t t = 0;
    for (; t + 4 <= steps; t += 4) {
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) a[r] = vld1q_s8(ar[r] + a0 + 4 * t);
      dot_step<0, MR, NP, I4>(wp, a, acc);
      dot_step<1, MR, NP, I4>(wp, a, acc);
      dot_step<2, MR, NP, I4>(wp, a, acc);
      dot_step<3, MR, NP, I4>(wp, a, acc);
    }
    if (t < steps) {
      // 1 to 3 steps left: 16 bytes read, those past the block unused (a8 has 16 to spare).
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) a[r] = vld1q_s8(ar[r] + a0 + 4 * t);
      dot_step<0, MR, NP, I4>(wp, a, acc);
      if (t + 1 < steps) dot_step<1, MR, NP, I4>(wp, a, acc);
      if (t + 2 < steps) dot_step<2, MR, NP, I4>(wp, a, acc);
    }
    if constexpr (I4) {
#pragma GCC unroll 8
      for (int j = 0; j < NP; ++j)
#pragma GCC unroll 4
        for (int g = 0; g < 4; ++g) {
          const float32x4_t s = vld1q_f32(p.scales.data() + b * npad + (panel + size_t(j)) * 16 + 4 * size_t(g));
#pragma GCC unroll 8
          for (int r = 0; r < MR; ++r) accf[r][j][g] = vfmaq_f32(accf[r][j][g], vcvtq_f32_s32(acc[r][j][g]), s);
        }
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < NP; ++j)
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g) {
      const size_t col = (panel + size_t(j)) * 16 + 4 * size_t(g);
      const float32x4_t sw = vld1q_f32(p.scales.data() + col);
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        const float32x4_t sa = vdupq_n_f32(q.scale[row + size_t(r)]);
        const float32x4_t v =
            I4 ? vmulq_f32(accf[r][j][g], sa) : vmulq_f32(vmulq_f32(vcvtq_f32_s32(acc[r][j][g]), sa), sw);
        store(c + (row + size_t(r)) * p.n, col, p.n, v, e);
      }
    }
}

template <int MR, int NP, bool I4>
void panels(const PackedWeights& p, const QuantizedRows& q, float* c, size_t row, size_t pb, size_t pe,
            const Epilogue& e) {
  size_t pan = pb;
  for (; pan + NP <= pe; pan += NP) tile<MR, NP, I4>(p, q, c, row, pan, e);
  for (; pan < pe; ++pan) tile<MR, 1, I4>(p, q, c, row, pan, e);
}

// 32 vector registers: int8 tiles hold MR x NP x 4 int32 sums (16 at most); int4
// tiles as many f32 sums besides (8 + 8).
void run_i8(const PackedWeights& p, const QuantizedRows& q, size_t m, float* c, size_t pb, size_t pe,
            const Epilogue& e) {
  size_t row = 0;
  for (; row + 4 <= m; row += 4) panels<4, 1, false>(p, q, c, row, pb, pe, e);
  switch (m - row) {
    case 3: panels<3, 1, false>(p, q, c, row, pb, pe, e); break;
    case 2: panels<2, 2, false>(p, q, c, row, pb, pe, e); break;
    case 1: panels<1, 4, false>(p, q, c, row, pb, pe, e); break;
    default: break;
  }
}

void run_i4(const PackedWeights& p, const QuantizedRows& q, size_t m, float* c, size_t pb, size_t pe,
            const Epilogue& e) {
  size_t row = 0;
  for (; row + 2 <= m; row += 2) panels<2, 1, true>(p, q, c, row, pb, pe, e);
  if (row < m) panels<1, 2, true>(p, q, c, row, pb, pe, e);
}

}  // namespace

void dyn_neondot(const PackedWeights& p, const QuantizedRows& rows, size_t m, float* c, size_t panel_begin,
                 size_t panel_end, const Epilogue& e) {
  if (p.storage == Storage::kInt4) run_i4(p, rows, m, c, panel_begin, panel_end, e);
  else run_i8(p, rows, m, c, panel_begin, panel_end, e);
}

}  // namespace sg::kernels::quant::detail

#endif
