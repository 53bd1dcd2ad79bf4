// Our packed-weight GEMM (dense_gemm.h) against the reference kernels: every
// instruction set this CPU has, awkward M, N and K (row and column tails, K over
// several K blocks and not a multiple of the block), with and without bias and
// relu, 1 and 2 threads; NaN through relu; which kernel a dense layer gets.
#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "simd/dense_gemm.h"
#include "xnnpack/xnn_common.h"
#include "xnnpack/xnn_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;
using simd::Isa;

ops::Attrs fc_attrs(int64_t act) {
  ops::Attrs a;
  a.values = {ops::AttrValue::Int(act)};
  return a;
}

// Our kernels for the sets this CPU runs (AVX-512 and AVX2 on a recent x86).
std::vector<Isa> our_isas() {
  std::vector<Isa> v;
  for (Isa isa : {Isa::kAvx512, Isa::kAvx2})
    if (int(isa) <= int(simd::best_isa())) v.push_back(isa);
  return v;
}

// One M x K @ K x N case on kernel `isa`: fused with bias (relu or not) when
// `bias`, else a plain matmul. The batch dim is symbolic at prepare time; the bias
// is a run-time input when `run_time_bias`.
void check_shape(Isa isa, int64_t m, int64_t k, int64_t n, bool bias, bool relu, void* pool,
                 bool run_time_bias = false) {
  HostTensor a = HostTensor::random(DType::kF32, {m, k}, uint32_t(m * 7 + k), -1, 1);
  HostTensor w = HostTensor::random(DType::kF32, {k, n}, uint32_t(k * 3 + n), -1, 1);
  HostTensor b = HostTensor::random(DType::kF32, {n}, uint32_t(n), -1, 1);
  std::vector<InputInfo> infos = {info_of(a, false, true), info_of(w, true)};
  infos[0].shape[1] = k;
  std::vector<HostTensor> in = {a, w};
  const OpId op = bias ? OpId::FullyConnected : OpId::MatMul;
  const int64_t act = relu ? ops::attr::kActRelu : ops::attr::kActNone;
  const ops::Attrs attrs = bias ? fc_attrs(act) : ops::Attrs{};
  if (bias) {
    infos.push_back(info_of(b, !run_time_bias));
    in.push_back(b);
  }
  auto kernel = xnn::make_packed_gemm(infos, act, isa);
  ASSERT_NE(kernel, nullptr);
  compare_once(*kernel, op, attrs, in, pool,
               std::string(kernel->name()) + " " + std::to_string(m) + "x" + std::to_string(k) + "x" +
                   std::to_string(n));
}

TEST(PackedGemm, AwkwardShapesMatchTheReference) {
  ASSERT_TRUE(xnnpack_init().ok());
  if (our_isas().empty()) GTEST_SKIP() << "no AVX2 or AVX-512 on this CPU: XNNPACK runs dense layers";
  int variant = 0;
  for (Isa isa : our_isas())
    for (int threads : {1, 2}) {
      ThreadPool pool(threads);
      for (int64_t m : {1, 7, 17, 33, 65})
        for (int64_t k : {1, 7, 17, 33, 65, 784})
          for (int64_t n : {1, 7, 17, 33, 65}) {
            // Cycle through matmul, bias, bias+relu and a run-time bias (relu or not).
            const int v = variant++ % 4;
            const bool relu = v == 2 || (v == 3 && m % 2 == 1);
            check_shape(isa, m, k, n, v != 0, relu, pool.get(), v == 3);
          }
    }
}

TEST(PackedGemm, LargeDimsAndManyKBlocks) {
  ASSERT_TRUE(xnnpack_init().ok());
  for (Isa isa : our_isas())
    for (int threads : {1, 2}) {
      ThreadPool pool(threads);
      check_shape(isa, 784, 33, 17, true, true, pool.get());
      check_shape(isa, 17, 33, 784, true, false, pool.get());
      check_shape(isa, 65, 1000, 100, true, true, pool.get());  // 1000: K blocks of unequal multiples of 4
      check_shape(isa, 64, 784, 512, true, true, pool.get());   // the mlp's first layer
      check_shape(isa, 1, 784, 512, false, false, pool.get());
      check_shape(isa, 1, 256, 256, true, false, pool.get(), true);  // the rnn cell: h @ U + x @ W
      check_shape(isa, 65, 1000, 100, true, true, pool.get(), true);
    }
}

// The micro-kernels' own NaN rule (the prepared kernel sends non-finite inputs to
// the reference, so call the kernel directly): a NaN in A makes its output row
// NaN through relu, other rows are unaffected, negatives become 0.
TEST(PackedGemm, MicroKernelsKeepNaNThroughRelu) {
#ifdef SG_SIMD_X86
  for (Isa isa : our_isas()) {
    const xnn::GemmFn fn = isa == Isa::kAvx512 ? xnn::gemm_avx512 : xnn::gemm_avx2;
    const size_t nr = isa == Isa::kAvx512 ? xnn::kAvx512NR : xnn::kAvx2NR;
    // 3 x 2 @ 2 x 3: w = [[1, -1, 0], [1, -1, 0]], bias 0; row 1 holds a NaN.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    alignas(64) float w[2 * 32] = {};
    for (size_t r = 0; r < 2; ++r) {
      w[r * nr] = 1;
      w[r * nr + 1] = -1;
    }
    alignas(64) float bias[32] = {};
    const float a[6] = {1, 2, nan, 1, -3, 1};
    float c[9];
    const xnn::GemmArgs args{a, 2, w, bias, c, 3, 3, 2, 2, true};
    fn(args, 0, 3, 0, 1);
    EXPECT_EQ(c[0], 3.0f);
    EXPECT_EQ(c[1], 0.0f);
    EXPECT_EQ(c[2], 0.0f);
    for (int j = 0; j < 3; ++j) EXPECT_TRUE(std::isnan(c[3 + j])) << "column " << j;
    EXPECT_EQ(c[6], 0.0f);
    EXPECT_EQ(c[7], 2.0f);
  }
#else
  GTEST_SKIP() << "x86 micro-kernels only";
#endif
}

// NaN and infinity in the input, and an input whose products overflow: results
// exactly as the reference's (the kernel hands these to it).
TEST(PackedGemm, NonFiniteAndOverflowingInputsGiveTheReferenceResult) {
  ASSERT_TRUE(xnnpack_init().ok());
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  HostTensor w(DType::kF32, {2, 40});
  for (int64_t i = 0; i < w.numel(); ++i) w.set(i, i % 3 == 0 ? 2.0 : -1.0);
  HostTensor b = HostTensor::random(DType::kF32, {40}, 9, -1, 1);
  for (Isa isa : our_isas()) {
    HostTensor x = HostTensor::of(DType::kF32, {4, 2}, {nan, 1, inf, 0, 1, -inf, 3e38, 3e38});
    std::vector<HostTensor> in = {x, w, b};
    auto kernel = xnn::make_packed_gemm(std::vector<InputInfo>{info_of(x, false), info_of(w, true), info_of(b, true)},
                                        ops::attr::kActRelu, isa);
    ASSERT_NE(kernel, nullptr);
    compare_once(*kernel, OpId::FullyConnected, fc_attrs(ops::attr::kActRelu), in, nullptr, kernel->name());
  }
}

// A bias that arrives at run time is added in the last store: NaN and infinities
// in it come out as in the reference (relu keeps NaN), each run reads the bias it
// is given, and the last, partial panel reads no bias past its 20 columns. Three
// rows run the tiles; one row (an RNN step) the single-row loop over full panels.
void check_run_time_bias(int64_t m) {
  ASSERT_TRUE(xnnpack_init().ok());
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  HostTensor x = HostTensor::random(DType::kF32, {m, 9}, 1, -1, 1);
  HostTensor w = HostTensor::random(DType::kF32, {9, 20}, 2, -1, 1);
  HostTensor b1 = HostTensor::random(DType::kF32, {20}, 3, -1, 1);
  HostTensor b2 = HostTensor::random(DType::kF32, {20}, 4, -1, 1);
  b2.set(0, nan);
  b2.set(17, inf);
  b2.set(19, -inf);
  for (Isa isa : our_isas())
    for (int64_t act : {ops::attr::kActNone, ops::attr::kActRelu}) {
      auto kernel = xnn::make_packed_gemm(
          std::vector<InputInfo>{info_of(x, false), info_of(w, true), info_of(b1, false)}, act, isa);
      ASSERT_NE(kernel, nullptr);
      EXPECT_NE(std::string(kernel->name()).find("+run_time_bias"), std::string::npos) << kernel->name();
      for (const HostTensor& b : {b1, b2, b1}) {
        std::vector<HostTensor> in = {x, w, b};
        compare_once(*kernel, OpId::FullyConnected, fc_attrs(act), in, nullptr, kernel->name());
      }
    }
}

TEST(PackedGemm, RunTimeBiasIsAddedInTheStore) {
  for (int64_t m : {3, 1}) {
    SCOPED_TRACE("rows " + std::to_string(m));
    check_run_time_bias(m);
  }
}

// One row of C comes from the loop over full panels and, for the last partial
// panel, from the one-panel row kernel: both sum in the same order, so a column
// is the same bytes on either path. W has one full panel of NR columns and half a
// panel after it that repeats the first NR / 2, on every instruction set here. At
// K = 12,400 the full panel is over kMaxPrefetchBytes, so it is read without
// software prefetch, and the partial one with it.
TEST(PackedGemm, SingleRowPathsGiveTheSameBytes) {
  const std::vector<Isa> isas = our_isas();
  if (isas.empty()) GTEST_SKIP() << "none of our micro-kernels runs on this CPU";
  for (Isa isa : isas) {
    for (const int64_t k : {int64_t(37), int64_t(12400)}) {
      std::optional<xnn::PackedPanels> probe = xnn::allocate_panels(isa, 1, 1, false);
      ASSERT_TRUE(probe.has_value());
      const int64_t half = int64_t(probe->isa.nr / 2), n = 3 * half;
      if (k > 37) {
        ASSERT_GT(size_t(k) * probe->isa.nr * sizeof(float), xnn::kMaxPrefetchBytes);
      }
      SCOPED_TRACE(std::string(probe->isa.name) + ", K " + std::to_string(k) + ", " + std::to_string(n) + " columns");
      std::mt19937 rng(5);
      std::uniform_real_distribution<float> dist(-1, 1);
      std::vector<float> a(static_cast<size_t>(k)), w(static_cast<size_t>(k * n)), b(static_cast<size_t>(n));
      for (float& v : a) v = dist(rng);
      for (float& v : w) v = dist(rng);
      for (float& v : b) v = dist(rng);
      for (int64_t r = 0; r < k; ++r) std::copy_n(&w[size_t(r * n)], half, &w[size_t(r * n + 2 * half)]);
      std::copy_n(&b[0], half, &b[size_t(2 * half)]);
      for (bool relu : {false, true}) {
        std::optional<xnn::PackedPanels> p = xnn::pack_panels(isa, w.data(), size_t(k), size_t(n), b.data());
        ASSERT_TRUE(p.has_value());
        std::vector<float> c(static_cast<size_t>(n));
        xnn::run_packed_rows(*p, a.data(), size_t(k), c.data(), size_t(n), 0, 1, relu);
        for (int64_t j = 0; j < half; ++j)
          EXPECT_EQ(std::memcmp(&c[size_t(j)], &c[size_t(2 * half + j)], sizeof(float)), 0)
              << "column " << j << ": " << c[size_t(j)] << " vs " << c[size_t(2 * half + j)]
              << (relu ? " (relu)" : "");
      }
    }
  }
}

TEST(PackedGemm, WeightsAreCopiedAtPrepare) {
  ASSERT_TRUE(xnnpack_init().ok());
  for (Isa isa : our_isas()) {
    HostTensor w = HostTensor::random(DType::kF32, {9, 40}, 5, -1, 1);
    HostTensor a = HostTensor::random(DType::kF32, {3, 9}, 6, -1, 1);
    auto k = xnn::make_packed_gemm(std::vector<InputInfo>{info_of(a, false), info_of(w, true)},
                                   ops::attr::kActNone, isa);
    ASSERT_NE(k, nullptr);
    EXPECT_GE(k->memory_bytes(), size_t(9 * 40 * 4));
    std::vector<HostTensor> in = {a, w};  // the reference's copy of the original weights
    for (int64_t i = 0; i < w.numel(); ++i) w.set(i, 1e6);
    compare_once(*k, OpId::MatMul, {}, in, nullptr, "after the constant changed");
  }
}

// Which kernel a dense layer gets through xnnpack_prepare: on AVX-512, ours where
// its panels are mostly full (the mlp's 784 -> 512) and XNNPACK for 10 outputs; on
// AVX2, ours for both; elsewhere XNNPACK.
TEST(PackedGemm, DenseLayersChooseTheirKernel) {
  ASSERT_TRUE(xnnpack_init().ok());
  HostTensor x = HostTensor::random(DType::kF32, {64, 784}, 1, -1, 1);
  HostTensor w = HostTensor::random(DType::kF32, {784, 512}, 2, -1, 1);
  HostTensor b = HostTensor::random(DType::kF32, {512}, 3, -1, 1);
  const ops::Attrs relu = fc_attrs(ops::attr::kActRelu);
  auto wide = xnnpack_prepare(OpId::FullyConnected, relu,
                              std::vector<InputInfo>{info_of(x, false, true), info_of(w, true), info_of(b, true)});
  ASSERT_NE(wide, nullptr);
  if (simd::best_isa() == Isa::kAvx512) {
    EXPECT_STREQ(wide->name(), "sg:packed_gemm_f32(avx512)+bias+relu");
  } else if (simd::best_isa() == Isa::kAvx2) {
    EXPECT_STREQ(wide->name(), "sg:packed_gemm_f32(avx2)+bias+relu");
  } else {
    // 1.5 MiB of weights: XNNPACK, split into 128-channel operators on this size.
    EXPECT_STREQ(wide->name(), "xnnpack:fully_connected_nc_f32(split)+bias+relu");
  }
  std::vector<HostTensor> in = {x, w, b};
  compare_once(*wide, OpId::FullyConnected, relu, in, nullptr, wide->name());

  HostTensor w10 = HostTensor::random(DType::kF32, {784, 10}, 4, -1, 1);
  HostTensor b10 = HostTensor::random(DType::kF32, {10}, 5, -1, 1);
  auto narrow = xnnpack_prepare(OpId::FullyConnected, fc_attrs(ops::attr::kActNone),
                                std::vector<InputInfo>{info_of(x, false), info_of(w10, true), info_of(b10, true)});
  ASSERT_NE(narrow, nullptr);
  EXPECT_STREQ(narrow->name(), simd::best_isa() == Isa::kAvx2 ? "sg:packed_gemm_f32(avx2)+bias"
                                                              : "xnnpack:fully_connected_nc_f32+bias");
  std::vector<HostTensor> narrow_in = {x, w10, b10};
  compare_once(*narrow, OpId::FullyConnected, fc_attrs(ops::attr::kActNone), narrow_in, nullptr, narrow->name());

  switch (simd::best_isa()) {
    case Isa::kAvx512:
      EXPECT_EQ(xnn::packed_gemm_isa(512), Isa::kAvx512);
      EXPECT_EQ(xnn::packed_gemm_isa(48), Isa::kAvx512);  // 48 real columns of 64
      EXPECT_EQ(xnn::packed_gemm_isa(10), std::nullopt);
      EXPECT_EQ(xnn::packed_gemm_isa(33), std::nullopt);  // 33 real columns of 64
      break;
    case Isa::kAvx2:
      for (int64_t n : {512, 48, 33, 10}) EXPECT_EQ(xnn::packed_gemm_isa(n), Isa::kAvx2) << n;
      break;
    default:
      for (int64_t n : {512, 48, 33, 10}) EXPECT_EQ(xnn::packed_gemm_isa(n), std::nullopt) << n;
      break;
  }
  EXPECT_EQ(xnn::packed_gemm_isa(0), std::nullopt);
}

}  // namespace
}  // namespace sg::kernels::testing
