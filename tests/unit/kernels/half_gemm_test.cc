// bf16 and f16 dense weights in column panels (kernels/quant/half_gemm.h): the
// activation rounding as vcvtne2ps2bf16 does it, each panel kernel this CPU runs
// against its stated arithmetic (bit for bit) and against float64 within the
// bf16 activations' rounding, non-finite values, and the dense kernel taking it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "quant/half_gemm.h"
#include "quant/quantized_kernels.h"
#include "quant/weight_format.h"

namespace sg::kernels::quant {
namespace {

std::vector<float> normal_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// The kernels this CPU runs for `s`: the widening one on AVX-512, the dot one with AVX512_BF16.
std::vector<HalfIsa> kernels_for(Storage s) {
  std::vector<HalfIsa> out;
  const Layout l = default_layout(s, {4, 4});
  if (best_half_isa(l) == HalfIsa::kAvx512Widen) out.push_back(HalfIsa::kAvx512Widen);
  if (bf16_dot_runs(l)) out.push_back(HalfIsa::kAvx512Bf16Dot);
  return out;
}

void run_columns(const HalfPanels& p, const float* a, size_t m, float* c) {
  std::vector<uint16_t> a16(m * p.kpad + 1);
  round_rows_bf16(a, m, p.k, p.kpad, a16.data());
  for (size_t begin = 0; begin < p.n; begin += kHalfColumnTile)
    half_gemm_columns(p, a, a16.data(), m, c, begin, std::min(p.n, begin + kHalfColumnTile));
}

bool same(float x, float y) { return x == y || (std::isnan(x) && std::isnan(y)); }

TEST(HalfGemm, ActivationRoundingIsTheInstructions) {
  EXPECT_EQ(round_activation_bf16(1.00390625f), 0x3F80);  // halfway: to even
  EXPECT_EQ(round_activation_bf16(1.01171875f), 0x3F82);
  EXPECT_EQ(round_activation_bf16(from_bits(0x00000001u)), 0x0000);  // denormal: zero
  EXPECT_EQ(round_activation_bf16(from_bits(0x807FFFFFu)), 0x8000);  // keeping its sign
  EXPECT_EQ(round_activation_bf16(from_bits(0x7F800001u)), 0x7FC0);  // signalling NaN: quiet
  EXPECT_EQ(round_activation_bf16(std::numeric_limits<float>::max()), 0x7F80);  // rounds to inf
  EXPECT_EQ(round_activation_bf16(-std::numeric_limits<float>::infinity()), 0xFF80);
  // The row kernel (SIMD where the CPU has AVX512_BF16) agrees, with K odd and the pad 0.
  for (size_t k : {1, 15, 16, 17, 33, 70}) {
    const size_t m = 3, kpad = (k + 1) / 2 * 2;
    std::vector<float> a = normal_values(m * k, uint32_t(k));
    a[0] = std::nanf("");
    a[m * k - 1] = from_bits(0x00400000u);
    if (k > 2) a[2] = -std::numeric_limits<float>::infinity();
    std::vector<uint16_t> got(m * kpad, 0xFFFF);
    round_rows_bf16(a.data(), m, k, kpad, got.data());
    for (size_t r = 0; r < m; ++r)
      for (size_t i = 0; i < kpad; ++i)
        ASSERT_EQ(got[r * kpad + i], i < k ? round_activation_bf16(a[r * k + i]) : 0)
            << "k=" << k << " " << r << "," << i;
  }
}

// Odd M, N and K (a pair padded), partial panels, several column tiles.
TEST(HalfGemm, KernelsEqualTheirArithmeticAndFloat64) {
  for (Storage s : {Storage::kBF16, Storage::kF16}) {
    const std::vector<HalfIsa> isas = kernels_for(s);
    if (isas.empty()) GTEST_SKIP() << "no AVX-512 on this CPU";
    for (HalfIsa isa : isas)
      for (size_t k : {1, 7, 32, 33, 97})
        for (size_t n : {1, 10, 16, 17, 40, 200})
          for (size_t m : {1, 2, 3, 4, 5, 8, 13}) {
            const Layout l = default_layout(s, {int64_t(k), int64_t(n)});
            const std::vector<float> w = normal_values(k * n, uint32_t(k * 7 + n));
            const std::vector<float> a = normal_values(m * k, uint32_t(m + k));
            const Quantized q = quantize(l, w.data());
            const WeightView view{&l, q.data.data(), nullptr};
            std::vector<float> wide(k * n), want(m * n), got(m * n, -1.0f);
            dequantize(view, 0, k * n, wide.data());
            half_gemm_reference(isa, view, a.data(), m, want.data());
            run_columns(*pack_half(view, isa), a.data(), m, got.data());
            // bf16 activations (8 significant bits): each a off by at most 2^-8 of itself.
            const double rel = isa == HalfIsa::kAvx512Bf16Dot ? 1.0 / 256 : 0.0;
            for (size_t r = 0; r < m; ++r)
              for (size_t c = 0; c < n; ++c) {
                double exact = 0.0, mag = 0.0;
                for (size_t j = 0; j < k; ++j) {
                  exact += double(a[r * k + j]) * wide[j * n + c];
                  mag += std::fabs(double(a[r * k + j]) * wide[j * n + c]);
                }
                const float v = got[r * n + c];
                ASSERT_EQ(v, want[r * n + c]) << half_isa_name(isa) << " " << storage_name(s) << " m=" << m
                                              << " k=" << k << " n=" << n << " at " << r << "," << c;
                ASSERT_NEAR(v, exact, mag * (rel + 1e-6) + 1e-6) << half_isa_name(isa) << " m=" << m << " k=" << k;
              }
          }
  }
}

// NaN and inf in the activations give what f32 gives (inf x 0 is NaN).
TEST(HalfGemm, NonFiniteActivationsPropagate) {
  for (Storage s : {Storage::kBF16, Storage::kF16})
    for (HalfIsa isa : kernels_for(s)) {
      const size_t k = 5, n = 3, m = 3;
      const Layout l = default_layout(s, {int64_t(k), int64_t(n)});
      std::vector<float> w(k * n, 0.5f);
      w[0 * n + 1] = -2.0f;
      w[0 * n + 2] = 0.0f;
      const float inf = std::numeric_limits<float>::infinity();
      const std::vector<float> a = {inf, 1, 1, 1, 1, 1, std::nanf(""), 1, 1, 1, 1, 1, 1, 1, 1};
      const Quantized q = quantize(l, w.data());
      const WeightView view{&l, q.data.data(), nullptr};
      std::vector<float> want(m * n), got(m * n);
      half_gemm_reference(isa, view, a.data(), m, want.data());
      run_columns(*pack_half(view, isa), a.data(), m, got.data());
      EXPECT_EQ(got[0], inf) << half_isa_name(isa);
      EXPECT_EQ(got[1], -inf);
      EXPECT_TRUE(std::isnan(got[2]));
      for (size_t c = 0; c < n; ++c) EXPECT_TRUE(std::isnan(got[n + c])) << c;
      EXPECT_EQ(got[2 * n], 2.5f);
      for (size_t i = 0; i < m * n; ++i) EXPECT_TRUE(same(got[i], want[i])) << half_isa_name(isa) << " at " << i;
    }
}

// A dense layer runs the panel kernel it is given: the runtime's (best_half_isa,
// exact: the widening one) and the bf16 dot kernel where the CPU has AVX512_BF16.
TEST(HalfGemm, DenseKernelRunsThePanels) {
  for (Storage s : {Storage::kBF16, Storage::kF16})
    for (HalfIsa isa : kernels_for(s)) {
      const Layout l = default_layout(s, {75, 40});
      EXPECT_NE(best_half_isa(l), HalfIsa::kAvx512Bf16Dot);
      const std::vector<float> w = normal_values(75 * 40, 5), a = normal_values(6 * 75, 6);
      const Quantized q = quantize(l, w.data());
      const WeightView view{&l, q.data.data(), nullptr};
      ops::Attrs attrs;
      auto kernel = prepare_quantized(ops::OpId::MatMul, attrs, l, q.data.data(), nullptr, best_gemm_isa(l), nullptr,
                                      nullptr, pack_half(view, isa));
      EXPECT_EQ(std::string(kernel->name()), std::string("quant:") + storage_name(s) + ":" + half_isa_name(isa));
      std::vector<float> want(6 * 40), out(6 * 40);
      half_gemm_reference(isa, view, a.data(), 6, want.data());
      TensorRef in[2], o[1];
      in[0] = TensorRef{DType::kF32, 2, {6, 75}, const_cast<float*>(a.data())};
      in[1] = TensorRef{DType::kF32, 2, {75, 40}, nullptr};
      o[0] = TensorRef{DType::kF32, 2, {6, 40}, out.data()};
      ASSERT_TRUE(kernel->run(KernelContext{}, in, o).ok());
      for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], want[i]) << storage_name(s) << " at " << i;
      // fully_connected with relu: the bias and relu in the kernel's store, as
      // `v < 0 ? 0 : v` of sum + bias (NaN stays NaN).
      ops::Attrs relu;
      relu.values.push_back(ops::AttrValue::Int(ops::attr::kActRelu));
      auto fc = prepare_quantized(ops::OpId::FullyConnected, relu, l, q.data.data(), nullptr, best_gemm_isa(l), nullptr,
                                  nullptr, pack_half(view, isa));
      std::vector<float> bias = normal_values(40, 8);
      bias[3] = std::nanf("");
      TensorRef fin[3];
      fin[0] = in[0];
      fin[1] = in[1];
      fin[2] = TensorRef{DType::kF32, 1, {40}, bias.data()};
      ASSERT_TRUE(fc->run(KernelContext{}, fin, o).ok());
      for (size_t i = 0; i < out.size(); ++i) {
        const float v = want[i] + bias[i % 40];
        ASSERT_TRUE(same(out[i], v < 0.0f ? 0.0f : v)) << storage_name(s) << " relu at " << i;
      }
    }
}

}  // namespace
}  // namespace sg::kernels::quant
