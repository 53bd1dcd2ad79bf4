// The overflow bound that lets dense kernels clamp and add their bias inside the
// XNNPACK operator (xnn_common.h explains why it is needed).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "simd/simd_kernels.h"

namespace sg::kernels::xnn {
namespace {

using namespace simd;

// Outputs above this bound are refused: the bound is exact in real arithmetic,
// and float rounding of a sum of K terms grows it by at most a factor 1 + K*2^-24,
// so a margin of 30x below FLT_MAX covers any K a tensor can have.
constexpr double kSafeLimit = 1e37;

// |x| as the int32 of its bits without the sign: integer order is magnitude
// order, and NaN and infinity sort above every finite value, so one integer max
// finds both the largest magnitude and any non-finite element.
template <class V>
SG_SIMD_INLINE int32_t max_magnitude_bits(const float* p, size_t n) {
  using I = IntOf<V>;
  I m0 = I{}, m1 = I{};
  size_t i = 0;
  for (; i + 2 * kLanes<V> <= n; i += 2 * kLanes<V>) {
    const I a = bit_cast<I>(load<V>(p + i)) & 0x7fffffff;
    const I b = bit_cast<I>(load<V>(p + i + kLanes<V>)) & 0x7fffffff;
    m0 = a > m0 ? a : m0;
    m1 = b > m1 ? b : m1;
  }
  m0 = m1 > m0 ? m1 : m0;
  int32_t r = 0;
  for (int l = 0; l < kLanes<V>; ++l) r = std::max(r, int32_t(m0[l]));
  for (; i < n; ++i) r = std::max(r, bit_cast<int32_t>(p[i]) & 0x7fffffff);
  return r;
}

#ifdef SG_SIMD_X86
SG_TARGET_AVX512 int32_t max_bits_avx512(const float* p, size_t n) { return max_magnitude_bits<V16>(p, n); }
SG_TARGET_AVX2 int32_t max_bits_avx2(const float* p, size_t n) { return max_magnitude_bits<V8>(p, n); }
#endif
int32_t max_bits_baseline(const float* p, size_t n) { return max_magnitude_bits<V4>(p, n); }

}  // namespace

float max_magnitude(const float* p, size_t n, Isa isa) {
  int32_t bits = 0;
  switch (isa) {
#ifdef SG_SIMD_X86
    case Isa::kAvx512: bits = max_bits_avx512(p, n); break;
    case Isa::kAvx2: bits = max_bits_avx2(p, n); break;
#endif
    default: bits = max_bits_baseline(p, n); break;
  }
  constexpr int32_t kInfBits = 0x7f800000;
  return bits >= kInfBits ? std::numeric_limits<float>::infinity() : bit_cast<float>(bits);
}

OverflowBound OverflowBound::of(const float* w, size_t rows, size_t channels, const float* bias) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  OverflowBound b;
  std::vector<double> column(channels, 0.0);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < channels; ++c) column[c] += std::fabs(double(w[r * channels + c]));
  for (double s : column) b.weights = std::max(b.weights, std::isfinite(s) ? s : kInf);
  if (bias != nullptr)
    for (size_t c = 0; c < channels; ++c)
      b.bias = std::max(b.bias, std::isfinite(bias[c]) ? std::fabs(double(bias[c])) : kInf);
  return b;
}

bool OverflowBound::safe(float max_abs_input) const {
  // max|x| = inf (a NaN or infinite input) makes the product inf, also against
  // zero weights, where inf*0 would be NaN: test it first.
  if (!std::isfinite(max_abs_input)) return false;
  return double(max_abs_input) * weights + bias <= kSafeLimit;
}

}  // namespace sg::kernels::xnn
