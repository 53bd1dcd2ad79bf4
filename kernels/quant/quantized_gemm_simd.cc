// The SIMD kernels of quantized_gemm.h, one template compiled per instruction set
// with target attributes (GCC/Clang vector extensions, as simd/simd.h): V is the
// f32 vector, and a tile is MR rows x 4 vectors of columns, the accumulators in
// registers for all of K. W's row k of the tile is widened once and used by every
// row of A in the tile.
#include <algorithm>
#include <cstring>

#include "quant/quantized_gemm.h"

namespace sg::kernels::quant::detail {
namespace {

#define SG_Q_INLINE inline __attribute__((always_inline))

template <class V> inline constexpr int kLanes = int(sizeof(V) / sizeof(float));

// The integer and half vectors of L lanes (vector_size takes no dependent type).
template <class T, int L> struct Vec;
#define SG_Q_VEC(T, L) \
  template <> struct Vec<T, L> { typedef T type __attribute__((vector_size(sizeof(T) * L))); };
#define SG_Q_VECS(T) SG_Q_VEC(T, 4) SG_Q_VEC(T, 8) SG_Q_VEC(T, 16)
SG_Q_VECS(int8_t)
SG_Q_VECS(uint8_t)
SG_Q_VECS(uint16_t)
SG_Q_VECS(uint32_t)
SG_Q_VECS(_Float16)
#undef SG_Q_VECS
#undef SG_Q_VEC

template <class V>
SG_Q_INLINE V splat(float x) {
  V r;
  for (int i = 0; i < kLanes<V>; ++i) r[i] = x;
  return r;
}

template <class V>
SG_Q_INLINE V loadf(const float* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// L consecutive weights of row k starting at column n, widened to f32 (int8 and
// int4 as their integer values: the caller applies the scales).
template <class V, Storage S>
SG_Q_INLINE V widen(const uint8_t* data, size_t index) {
  constexpr int L = kLanes<V>;
  if constexpr (S == Storage::kInt8) {
    typename Vec<int8_t, L>::type q;
    std::memcpy(&q, data + index, sizeof q);
    return __builtin_convertvector(q, V);
  } else if constexpr (S == Storage::kInt4) {
    // index is even (tiles start at even columns of rows of even length).
    typename Vec<uint8_t, L>::type b{};
    std::memcpy(&b, data + index / 2, L / 2);
    typename Vec<uint8_t, L>::type pairs, shift;
    for (int i = 0; i < L; ++i) {
      pairs[i] = b[i / 2];
      shift[i] = uint8_t(4 * (i & 1));
    }
    const auto nib = (pairs >> shift) & uint8_t(0xF);
    const auto sgn = __builtin_convertvector(nib ^ uint8_t(8), typename Vec<int8_t, L>::type) - int8_t(8);
    return __builtin_convertvector(sgn, V);
  } else if constexpr (S == Storage::kBF16) {
    typename Vec<uint16_t, L>::type h;
    std::memcpy(&h, data + 2 * index, sizeof h);
    const auto w = __builtin_convertvector(h, typename Vec<uint32_t, L>::type) << 16;
    V f;
    std::memcpy(&f, &w, sizeof f);
    return f;
  } else {
    typename Vec<_Float16, L>::type h;
    std::memcpy(&h, data + 2 * index, sizeof h);
    return __builtin_convertvector(h, V);
  }
}

// The scales of L columns from n: int8's per column, int4's of block kb.
template <class V>
SG_Q_INLINE V scales_of(const WeightView& w, size_t index) {
  V s;
  for (int i = 0; i < kLanes<V>; ++i) s[i] = scale_at(w.layout->scale_type, w.scales, index + size_t(i));
  return s;
}

template <class V, Storage S, int MR, int NV>
SG_Q_INLINE void tile(const GemmProblem& p, size_t row, size_t col) {
  constexpr int L = kLanes<V>;
  V acc[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NV; ++j) acc[r][j] = V{};
  const float* a = p.a + row * p.k;
  const size_t block = S == Storage::kInt4 ? size_t(p.w.layout->block) : p.k;
  for (size_t k0 = 0; k0 < p.k; k0 += block) {
    V scale[NV];
    if constexpr (S == Storage::kInt4)
      for (int j = 0; j < NV; ++j) scale[j] = scales_of<V>(p.w, (k0 / block) * p.n + col + size_t(j * L));
    for (size_t k = k0; k < k0 + block; ++k) {
      V w[NV];
      for (int j = 0; j < NV; ++j) {
        w[j] = widen<V, S>(p.w.data, k * p.n + col + size_t(j * L));
        if constexpr (S == Storage::kInt4) w[j] *= scale[j];
      }
      for (int r = 0; r < MR; ++r) {
        const V av = splat<V>(a[size_t(r) * p.k + k]);
        for (int j = 0; j < NV; ++j) acc[r][j] += av * w[j];
      }
    }
  }
  V colscale[NV];
  if constexpr (S == Storage::kInt8)
    for (int j = 0; j < NV; ++j) colscale[j] = scales_of<V>(p.w, col + size_t(j * L));
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NV; ++j) {
      V v = acc[r][j];
      if constexpr (S == Storage::kInt8) v *= colscale[j];
      std::memcpy(p.c + (row + size_t(r)) * p.n + col + size_t(j * L), &v, sizeof v);
    }
}

// Columns [col, col + NV*L) for all rows, MR at a time.
template <class V, Storage S, int MR, int NV>
SG_Q_INLINE void column_strip(const GemmProblem& p, size_t col) {
  size_t row = 0;
  for (; row + MR <= p.m; row += MR) tile<V, S, MR, NV>(p, row, col);
  for (; row < p.m; ++row) tile<V, S, 1, NV>(p, row, col);
}

// Whole vectors of columns in [begin, end): 4-vector strips, then single vectors;
// what is left (fewer than L columns) goes to the scalar loop.
template <class V, Storage S, int MR>
SG_Q_INLINE size_t strips(const GemmProblem& p, size_t begin, size_t end) {
  constexpr size_t L = size_t(kLanes<V>);
  size_t col = begin;
  for (; col + 4 * L <= end; col += 4 * L) column_strip<V, S, MR, 4>(p, col);
  for (; col + L <= end; col += L) column_strip<V, S, MR, 1>(p, col);
  return col;
}

template <class V, int MR>
SG_Q_INLINE size_t run_strips(const GemmProblem& p, size_t begin, size_t end) {
  switch (p.w.layout->storage) {
    case Storage::kInt8: return strips<V, Storage::kInt8, MR>(p, begin, end);
    case Storage::kInt4: return strips<V, Storage::kInt4, MR>(p, begin, end);
    case Storage::kBF16: return strips<V, Storage::kBF16, MR>(p, begin, end);
    case Storage::kF16: return strips<V, Storage::kF16, MR>(p, begin, end);
    case Storage::kF32: break;
  }
  return begin;
}

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
  scalar_columns(p, run_strips<V4, 2>(p, col_begin, col_end), col_end);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2,fma,f16c"))) void gemm_avx2(const GemmProblem& p, size_t col_begin, size_t col_end) {
  using V8 = float __attribute__((vector_size(32)));
  scalar_columns(p, run_strips<V8, 3>(p, col_begin, col_end), col_end);
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c"))) void gemm_avx512(const GemmProblem& p,
                                                                                     size_t col_begin,
                                                                                     size_t col_end) {
  using V16 = float __attribute__((vector_size(64)));
  scalar_columns(p, run_strips<V16, 4>(p, col_begin, col_end), col_end);
}
#endif

}  // namespace sg::kernels::quant::detail
