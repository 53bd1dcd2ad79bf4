// Portable SIMD for our own f32 kernels: GCC/Clang vector extensions, compiled
// once per x86 instruction set (AVX-512, AVX2+FMA, baseline SSE2) and picked at
// run time, so that the library needs no -march flag. On other targets only the
// baseline (16-byte vectors: NEON on aarch64) is built.
#pragma once

#include <cstdint>
#include <cstring>

namespace sg::kernels::simd {

using V4 = float __attribute__((vector_size(16)));
using V8 = float __attribute__((vector_size(32)));
using V16 = float __attribute__((vector_size(64)));

#define SG_SIMD_INLINE inline __attribute__((always_inline))

#if defined(__x86_64__) && defined(__GNUC__)
#define SG_SIMD_X86 1
#define SG_TARGET_AVX512 __attribute__((target("avx512f,avx2,fma")))
#define SG_TARGET_AVX2 __attribute__((target("avx2,fma")))
#endif

enum class Isa { kBaseline, kAvx2, kAvx512 };

inline Isa best_isa() {
#ifdef SG_SIMD_X86
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma")) return Isa::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::kAvx2;
#endif
  return Isa::kBaseline;
}

// The int32 vector of V's width (int32_t for float), for bit manipulation.
template <class V> struct IntOfT;
template <> struct IntOfT<float> { using type = int32_t; };
template <> struct IntOfT<V4> { using type = int32_t __attribute__((vector_size(16))); };
template <> struct IntOfT<V8> { using type = int32_t __attribute__((vector_size(32))); };
template <> struct IntOfT<V16> { using type = int32_t __attribute__((vector_size(64))); };
template <class V> using IntOf = typename IntOfT<V>::type;

template <class To, class From>
SG_SIMD_INLINE To bit_cast(From v) {
  static_assert(sizeof(To) == sizeof(From));
  To t;
  std::memcpy(&t, &v, sizeof(To));
  return t;
}

template <class V>
inline constexpr int kLanes = int(sizeof(V) / sizeof(float));

// A value with every lane `v` (or `v` itself when V is float), bit for bit. Lane
// by lane, which GCC 12 turns into one broadcast; its splat of `-V{} + v` (the
// scalar operand of a vector op) was a masked broadcast per lane on AVX-512 and
// an insert per lane on AVX2, in every loop that splat a value read from memory
// (the batch matmul's A, a binary op's scalar operand).
template <class V>
SG_SIMD_INLINE V splat(float v) {
  if constexpr (sizeof(V) == sizeof(float)) {
    return v;
  } else {
    V r;
    for (int i = 0; i < kLanes<V>; ++i) r[i] = v;
    return r;
  }
}

template <class V>
SG_SIMD_INLINE V load(const float* p) {
  V v;
  std::memcpy(&v, p, sizeof(V));
  return v;
}

template <class V>
SG_SIMD_INLINE void store(float* p, V v) {
  std::memcpy(p, &v, sizeof(V));
}

// NaN-preserving clamp of x to [lo, hi]: comparisons with NaN are false, so a
// NaN lane keeps x.
template <class V>
SG_SIMD_INLINE V clamp(V x, V lo, V hi) {
  x = x < lo ? lo : x;
  return x > hi ? hi : x;
}

}  // namespace sg::kernels::simd
