// The counter-based generator behind the `random` op (SPEC §3, op_table.h's
// attr::Random): Threefry-2x32 with 20 rounds, as in Random123 and JAX, and the
// transforms from 32 random bits to floats. Every transform is a fixed sequence
// of f32 additions, multiplications, divisions and square roots (correctly
// rounded in IEEE arithmetic) and integer bit operations, compiled without
// contraction into fused multiply-adds, so its results are the same bits on every
// machine and in eager mode (compiler/python/stagegraph/random.py, which does
// the same operations in the same order with NumPy float32).
#pragma once

#include <cstdint>

namespace sg::kernels::random {

struct Words {
  uint32_t w0, w1;
};

inline constexpr uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

// Threefry-2x32-20 of the counter (x0, x1) under the key (k0, k1).
inline constexpr Words threefry2x32(uint32_t k0, uint32_t k1, uint32_t x0, uint32_t x1) {
  constexpr int kRot[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  const uint32_t ks[3] = {k0, k1, k0 ^ k1 ^ 0x1BD11BDAu};
  x0 += ks[0];
  x1 += ks[1];
  for (uint32_t i = 0; i < 5; ++i) {
    for (int r : kRot[i % 2]) {
      x0 += x1;
      x1 = rotl32(x1, r);
      x1 ^= x0;
    }
    x0 += ks[(i + 1) % 3];
    x1 += ks[(i + 2) % 3] + i + 1;
  }
  return {x0, x1};
}

// The words of element `index` of a draw under `key` (JAX's partitionable
// construction: the counter is the 64-bit index split into high and low words).
inline constexpr Words draw_words(uint32_t k0, uint32_t k1, uint64_t index) {
  return threefry2x32(k0, k1, uint32_t(index >> 32), uint32_t(index));
}

// [0, 1): the 23 high bits as a mantissa of a float in [1, 2), minus 1.
float uniform01(uint32_t bits);
// JAX's uniform on [lo, hi): max(lo, uniform01(bits) * (hi - lo) + lo).
float uniform_in(uint32_t bits, float lo, float hi);
// Natural log of a positive normal float (FreeBSD's logf algorithm, in f32).
float log_f32(float x);
// erfinv on (-1, 1) (Giles' single-precision approximation over log_f32).
float erfinv_f32(float x);
// Standard normal: sqrt(2)·erfinv(u), u uniform on [nextafter(-1, 0), 1).
float normal_from_bits(uint32_t bits);
// Standard Gumbel: -log(-log(u)), u uniform on [smallest normal, 1).
float gumbel_from_bits(uint32_t bits);

}  // namespace sg::kernels::random
