// The random op's reference kernel and the generator's float transforms
// (random.h). This file is compiled with -ffp-contract=off (CMakeLists.txt): a
// fused multiply-add would round once where eager mode rounds twice.
#include "reference/random.h"

#include <bit>
#include <cmath>
#include <string>

#include "reference/kernel_util.h"
#include "reference/reference_kernels.h"

namespace sg::kernels {
namespace random {
namespace {

float from_bits(uint32_t b) { return std::bit_cast<float>(b); }
uint32_t to_bits(float f) { return std::bit_cast<uint32_t>(f); }

}  // namespace

float uniform01(uint32_t bits) { return from_bits((bits >> 9) | 0x3f800000u) - 1.0f; }

float uniform_in(uint32_t bits, float lo, float hi) {
  const float scale = hi - lo;
  const float v = uniform01(bits) * scale + lo;
  return v > lo ? v : lo;  // max(lo, v); v is never NaN
}

float log_f32(float x) {
  // x = 2^k · m with m in [sqrt(2)/2, sqrt(2)); log(m) = log(1 + f) from s = f / (2 + f).
  constexpr float kLn2Hi = 0x1.62e300p-1f;   // 6.9313812256e-01
  constexpr float kLn2Lo = 0x1.2fefa2p-17f;  // 9.0580006145e-06
  constexpr float kLg1 = 0xaaaaaa.0p-24f;    // 0.66666662693
  constexpr float kLg2 = 0xccce13.0p-25f;    // 0.40000972152
  constexpr float kLg3 = 0x91e9ee.0p-25f;    // 0.28498786688
  constexpr float kLg4 = 0xf89e26.0p-26f;    // 0.24279078841
  uint32_t ix = to_bits(x) + (0x3f800000u - 0x3f3504f3u);
  const int32_t k = int32_t(ix >> 23) - 0x7f;
  ix = (ix & 0x007fffffu) + 0x3f3504f3u;
  const float f = from_bits(ix) - 1.0f;
  const float s = f / (2.0f + f);
  const float z = s * s;
  const float w = z * z;
  const float t1 = w * (kLg2 + w * kLg4);
  const float t2 = z * (kLg1 + w * kLg3);
  const float r = t2 + t1;
  const float hfsq = 0.5f * f * f;
  const float dk = float(k);
  return s * (hfsq + r) + dk * kLn2Lo - hfsq + f + dk * kLn2Hi;
}

float erfinv_f32(float x) {
  constexpr float kSmall[9] = {2.81022636e-08f,  3.43273939e-07f, -3.5233877e-06f,
                               -4.39150654e-06f, 0.00021858087f,  -0.00125372503f,
                               -0.00417768164f,  0.246640727f,    1.50140941f};
  constexpr float kLarge[9] = {-0.000200214257f, 0.000100950558f, 0.00134934322f,
                               -0.00367342844f,  0.00573950773f,  -0.0076224613f,
                               0.00943887047f,   1.00167406f,     2.83297682f};
  float w = -log_f32((1.0f - x) * (1.0f + x));
  const bool small = w < 5.0f;
  const float* c = small ? kSmall : kLarge;
  w = small ? w - 2.5f : std::sqrt(w) - 3.0f;
  float p = c[0];
  for (int i = 1; i < 9; ++i) p = c[i] + p * w;
  return p * x;
}

float normal_from_bits(uint32_t bits) {
  constexpr float kLo = -0x1.fffffep-1f;  // nextafter(-1, 0)
  constexpr float kSqrt2 = 0x1.6a09e6p+0f;
  return kSqrt2 * erfinv_f32(uniform_in(bits, kLo, 1.0f));
}

float gumbel_from_bits(uint32_t bits) {
  constexpr float kTiny = 0x1p-126f;  // the smallest normal f32
  return -log_f32(-log_f32(uniform_in(bits, kTiny, 1.0f)));
}

}  // namespace random

namespace {

Status random_kernel(const KernelContext&, const ops::Attrs& attrs, std::span<const TensorRef> in,
                     std::span<TensorRef> out) {
  using namespace ops::attr;
  if (in.empty() || out.size() != 1) return internal_error("random: expects a key and one output");
  const TensorRef& key = in[0];
  if (key.dtype != DType::kI64 || key.rank != 1 || key.shape[0] != 2)
    return internal_error("random: the key must be i64[2], got " + describe(key));
  const uint32_t k0 = uint32_t(key.as<int64_t>()[0]), k1 = uint32_t(key.as<int64_t>()[1]);
  TensorRef& o = out[0];
  const int64_t dist = attrs.i(kRandomDistribution);
  const int64_t n = o.numel();
  if (dist == kKeys) {
    if (o.dtype != DType::kI64 || o.rank < 1 || o.shape[o.rank - 1] != 2)
      return internal_error("random: keys must be i64[..., 2], got " + describe(o));
    int64_t* p = o.as<int64_t>();
    for (int64_t i = 0; i < n / 2; ++i) {
      const random::Words w = random::draw_words(k0, k1, uint64_t(i));
      p[2 * i] = int64_t(w.w0);
      p[2 * i + 1] = int64_t(w.w1);
    }
    return Status::Ok();
  }
  if (dist == kBits) {
    if (o.dtype != DType::kI64) return internal_error("random: bits must be i64, got " + describe(o));
    int64_t* p = o.as<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      const random::Words w = random::draw_words(k0, k1, uint64_t(i));
      p[i] = int64_t(w.w0 ^ w.w1);
    }
    return Status::Ok();
  }
  if (o.dtype != DType::kF32) return internal_error("random: draws must be f32, got " + describe(o));
  float* p = o.as<float>();
  float (*transform)(uint32_t) = dist == kUniform  ? &random::uniform01
                                 : dist == kNormal ? &random::normal_from_bits
                                 : dist == kGumbel ? &random::gumbel_from_bits
                                                   : nullptr;
  if (!transform) return internal_error("random: unknown distribution " + std::to_string(dist));
  for (int64_t i = 0; i < n; ++i) {
    const random::Words w = random::draw_words(k0, k1, uint64_t(i));
    p[i] = transform(w.w0 ^ w.w1);
  }
  return Status::Ok();
}

}  // namespace

KernelFn random_kernel_of(ops::OpId op) { return op == ops::OpId::Random ? &random_kernel : nullptr; }

}  // namespace sg::kernels
