// Quantized and half-precision weights (kernels/quant/): the layout checks the
// verifier relies on, quantization error bounds, and every quantized GEMM kernel
// this CPU runs against a float64 reference over the same widened weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <random>
#include <vector>

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

#include "quant/dynamic_gemm.h"
#include "quant/quantized_gemm.h"
#include "quant/quantized_kernels.h"
#include "quant/weight_format.h"

namespace sg::kernels::quant {
namespace {

Layout layout(Storage s, std::vector<int64_t> dims, int axis = 0, int64_t block = 0, ScaleType t = ScaleType::kF32) {
  Layout l;
  l.storage = s;
  l.dims = std::move(dims);
  l.axis = axis;
  l.block = block;
  l.scale_type = t;
  return l;
}

std::vector<float> random_weights(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> w(n);
  for (float& v : w) v = dist(rng);
  return w;
}

TEST(QuantLayout, ChecksEveryField) {
  EXPECT_EQ(check_layout(layout(Storage::kInt8, {4, 6}, 1)), "");
  EXPECT_EQ(check_layout(layout(Storage::kInt4, {64, 6}, 0, 32, ScaleType::kF16)), "");
  EXPECT_EQ(check_layout(layout(Storage::kInt4, {48, 6}, 0, 32)), "int4 block size 32 does not divide axis 0 of size 48");
  EXPECT_EQ(check_layout(layout(Storage::kInt4, {64, 6}, 0, 0)), "int4 block size 0 is not positive");
  EXPECT_EQ(check_layout(layout(Storage::kInt8, {4, 6}, 2)), "int8 axis 2 is out of range for rank 2");
  EXPECT_EQ(check_layout(layout(Storage::kInt8, {4, 6}, 1, 2)), "int8 storage takes no block size (one scale per channel)");
  EXPECT_EQ(check_layout(layout(Storage::kBF16, {4, 6}, 1)), "bf16 storage takes no axis or block size");
  EXPECT_EQ(check_layout(layout(Storage(9), {4})), "unknown weight storage 9");
  EXPECT_EQ(check_layout(layout(Storage::kInt8, {})), "int8 storage needs a tensor of rank >= 1 (a scale per channel or block)");
}

TEST(QuantLayout, SizesOfDataAndScales) {
  const Layout i8 = layout(Storage::kInt8, {5, 7}, 1);
  EXPECT_EQ(data_bytes(i8), 35u);
  EXPECT_EQ(scale_count(i8), 7u);
  EXPECT_EQ(scale_bytes(i8), 28u);
  const Layout i4 = layout(Storage::kInt4, {64, 7}, 0, 16, ScaleType::kBF16);
  EXPECT_EQ(data_bytes(i4), 224u);
  EXPECT_EQ(scale_count(i4), 28u);
  EXPECT_EQ(scale_bytes(i4), 56u);
  EXPECT_EQ(data_bytes(layout(Storage::kInt4, {3, 3}, 0, 3)), 5u);  // an odd count rounds up
  EXPECT_EQ(data_bytes(layout(Storage::kF16, {3, 3})), 18u);
}

TEST(QuantLayout, DefaultLayoutsFollowTheLayer) {
  const Layout d = default_layout(Storage::kInt8, {784, 512});
  EXPECT_EQ(d.axis, 1);
  const Layout b = default_layout(Storage::kInt4, {784, 512});
  EXPECT_EQ(b.axis, 0);
  EXPECT_EQ(b.block, 28);  // the largest size <= 32 that divides 784
  EXPECT_EQ(b.scale_type, ScaleType::kF16);
  EXPECT_EQ(default_layout(Storage::kInt4, {3, 3, 16, 32}).axis, 2);
}

TEST(Quantize, ErrorWithinHalfAScale) {
  for (Storage s : {Storage::kInt8, Storage::kInt4}) {
    const Layout l = default_layout(s, {64, 24});
    const std::vector<float> w = random_weights(64 * 24, 1);
    const Quantized q = quantize(l, w.data());
    std::vector<float> back(w.size());
    const WeightView view{&l, q.data.data(), q.scales.data()};
    dequantize(view, 0, w.size(), back.data());
    for (size_t i = 0; i < w.size(); ++i) {
      // The scale of element i: per column (int8) or per block of 32 rows and column (int4).
      const uint64_t scale = s == Storage::kInt8 ? i % 24 : (i / 24 / uint64_t(l.block)) * 24 + i % 24;
      const float step = scale_at(l.scale_type, q.scales.data(), scale);
      ASSERT_LE(std::fabs(back[i] - w[i]), 0.5f * step * 1.0001f + 1e-7f) << storage_name(s) << " element " << i;
    }
  }
}

TEST(Quantize, HalfPrecisionRoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(1.00390625f), 0x3F80);  // halfway: to even
  EXPECT_EQ(float_to_bf16(1.01171875f), 0x3F82);  // halfway: to even (up)
  EXPECT_EQ(bf16_to_float(0xC040), -3.0f);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::nanf("")))));
  const Layout l = layout(Storage::kF16, {3});
  const float w[3] = {1.0f, 0.1f, -65504.0f};
  const Quantized q = quantize(l, w);
  float back[3];
  dequantize(WeightView{&l, q.data.data(), nullptr}, 0, 3, back);
  EXPECT_EQ(back[0], 1.0f);
  EXPECT_NEAR(back[1], 0.1f, 3e-5f);
  EXPECT_EQ(back[2], -65504.0f);
}

bool runs(GemmIsa isa, const Layout& l) {
  return isa == GemmIsa::kReference || (best_gemm_isa(l) != GemmIsa::kReference && int(isa) <= int(best_gemm_isa(l)));
}

// Every kernel this CPU runs, every storage, shapes with and without whole tiles.
TEST(QuantizedGemm, EveryKernelMatchesTheFloat64Reference) {
  for (Storage s : {Storage::kInt8, Storage::kInt4, Storage::kBF16, Storage::kF16})
    for (size_t k : {32, 96})
      for (size_t n : {10, 64, 136, 200})
        for (size_t m : {1, 2, 3, 5, 8}) {
          const Layout l = default_layout(s, {int64_t(k), int64_t(n)});
          const std::vector<float> w = random_weights(k * n, uint32_t(k + n));
          const std::vector<float> a = random_weights(m * k, uint32_t(m));
          const Quantized q = quantize(l, w.data());
          const WeightView view{&l, q.data.data(), q.scales.data()};
          std::vector<float> wide(k * n);
          dequantize(view, 0, k * n, wide.data());
          std::vector<double> want(m * n, 0.0);
          for (size_t r = 0; r < m; ++r)
            for (size_t c = 0; c < n; ++c)
              for (size_t j = 0; j < k; ++j) want[r * n + c] += double(a[r * k + j]) * wide[j * n + c];
          for (GemmIsa isa : {GemmIsa::kReference, GemmIsa::kBaseline, GemmIsa::kAvx2, GemmIsa::kAvx512}) {
            if (!runs(isa, l)) continue;
            std::vector<float> c(m * n, -1.0f), row(n);
            const GemmProblem p{a.data(), view, c.data(), m, k, n};
            const size_t tile = gemm_column_tile(isa);
            for (size_t begin = 0; begin < n; begin += tile)
              gemm_columns(isa, p, begin, std::min(n, begin + tile), row.data());
            for (size_t i = 0; i < m * n; ++i)
              ASSERT_NEAR(c[i], want[i], 2e-5 * double(k)) << storage_name(s) << " " << gemm_isa_name(isa) << " m=" << m
                                                            << " k=" << k << " n=" << n << " at " << i;
          }
        }
}

TEST(QuantizedKernels, FullyConnectedAddsBiasAndRelu) {
  const Layout l = default_layout(Storage::kInt8, {2, 3});
  const float w[6] = {1, -2, 3, 4, 5, 6};
  const Quantized q = quantize(l, w);
  float wide[6];
  dequantize(WeightView{&l, q.data.data(), q.scales.data()}, 0, 6, wide);
  ops::Attrs attrs;
  attrs.values.push_back(ops::AttrValue::Int(ops::attr::kActRelu));
  ASSERT_TRUE(reads_quantized(ops::OpId::FullyConnected, attrs, 1, l));
  EXPECT_FALSE(reads_quantized(ops::OpId::FullyConnected, attrs, 0, l));
  auto kernel = prepare_quantized(ops::OpId::FullyConnected, attrs, l, q.data.data(), q.scales.data());
  float x[2] = {1, 0}, b[3] = {0.5f, 0.5f, -4}, out[3];
  TensorRef in[3], o[1];
  in[0] = TensorRef{DType::kF32, 2, {1, 2}, x};
  in[1] = TensorRef{DType::kF32, 2, {2, 3}, nullptr};
  in[2] = TensorRef{DType::kF32, 1, {3}, b};
  o[0] = TensorRef{DType::kF32, 2, {1, 3}, out};
  ASSERT_TRUE(kernel->run(KernelContext{}, in, o).ok());
  EXPECT_EQ(out[0], wide[0] + 0.5f);  // x selects row 0 of the widened weights
  EXPECT_GT(std::fabs(wide[0] - 1.0f), 0.0f);  // 1 is not on the column's grid of 4/127
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(out[2], 0.0f);
}

TEST(QuantizedKernels, TakeWidensTheRowsItReadsAndChecksIndices) {
  const Layout l = default_layout(Storage::kInt4, {4, 8});
  const std::vector<float> w = random_weights(32, 7);
  const Quantized q = quantize(l, w.data());
  std::vector<float> wide(32);
  dequantize(WeightView{&l, q.data.data(), q.scales.data()}, 0, 32, wide.data());
  ops::Attrs attrs;
  attrs.values.push_back(ops::AttrValue::Int(0));
  ASSERT_TRUE(reads_quantized(ops::OpId::Take, attrs, 0, l));
  auto kernel = prepare_quantized(ops::OpId::Take, attrs, l, q.data.data(), q.scales.data());
  int32_t idx[2] = {3, -4};
  float out[16];
  TensorRef in[2], o[1];
  in[0] = TensorRef{DType::kF32, 2, {4, 8}, nullptr};
  in[1] = TensorRef{DType::kI32, 1, {2}, idx};
  o[0] = TensorRef{DType::kF32, 2, {2, 8}, out};
  ASSERT_TRUE(kernel->run(KernelContext{}, in, o).ok());
  for (int j = 0; j < 8; ++j) {
    EXPECT_EQ(out[j], wide[24 + j]);
    EXPECT_EQ(out[8 + j], wide[j]);
  }
  idx[1] = 4;
  const Status s = kernel->run(KernelContext{}, in, o);
  EXPECT_EQ(s.code(), StatusCode::kRuntimeError);
  EXPECT_EQ(s.message(), "take: index 4 is out of bounds for axis 0 with size 4");
}

// Dynamic quantization of the activations: every SIMD kernel this CPU runs (AVX2 and
// AVX-512 VNNI, AVX-VNNI on x86-64, NEON dot on aarch64: runnable_dyn_isas) equals
// the reference bit for bit (integer sums are exact, the f32 steps the same), over
// odd shapes: M = 1..7, N off the panel width, K off the block and off 4.
TEST(DynamicGemm, SimdEqualsTheReferenceBitForBit) {
  struct Shape {
    size_t k, n;
    int64_t block;  // int4's (0: the default layout's)
  };
  const Shape shapes[] = {{1, 1, 1}, {3, 5, 3}, {7, 9, 7}, {32, 24, 0}, {50, 13, 25}, {64, 70, 32},
                          {96, 136, 0}, {84, 200, 28}, {130, 17, 26}, {256, 256, 0}};
  for (Storage s : {Storage::kInt8, Storage::kInt4})
    for (const Shape& sh : shapes) {
      Layout l = default_layout(s, {int64_t(sh.k), int64_t(sh.n)});
      if (s == Storage::kInt4 && sh.block > 0) l.block = sh.block;
      ASSERT_EQ(check_layout(l), "");
      ASSERT_TRUE(dynamic_layout(l));
      const std::vector<float> w = random_weights(sh.k * sh.n, uint32_t(sh.k * 7 + sh.n));
      const Quantized q = quantize(l, w.data());
      const WeightView view{&l, q.data.data(), q.scales.data()};
      for (size_t m = 1; m <= 7; ++m) {
        std::vector<float> a = random_weights(m * sh.k, uint32_t(m + sh.k));
        if (m == 5) std::fill(a.begin() + 2 * long(sh.k), a.begin() + 3 * long(sh.k), 0.0f);  // a zero row
        std::vector<float> want(m * sh.n, -1.0f);
        dynamic_gemm_reference(view, a.data(), want.data(), m);
        for (DynIsa isa : runnable_dyn_isas(l)) {
          const auto packed = pack_weights(view, isa);
          QuantizedRows rows;
          quantize_rows(*packed, a.data(), m, &rows);
          std::vector<float> c(m * sh.n, -1.0f);
          const size_t tile = dynamic_column_tile(isa);
          for (size_t begin = 0; begin < sh.n; begin += tile)
            dynamic_gemm_columns(*packed, rows, m, c.data(), begin, std::min(sh.n, begin + tile));
          for (size_t i = 0; i < m * sh.n; ++i)
            ASSERT_EQ(c[i], want[i]) << storage_name(s) << " " << dyn_isa_name(isa) << " m=" << m << " k=" << sh.k
                                     << " n=" << sh.n << " block=" << l.block << " at " << i;
        }
      }
    }
}

// aarch64 Linux: the NEON dot kernel is picked exactly where the kernel reports the
// dot-product extension (qemu-aarch64's default CPU has it: make aarch64-smoke then
// runs the kernel in the tests above).
TEST(DynamicGemm, NeonDotIsPickedWhereTheCpuHasIt) {
  const Layout l = default_layout(Storage::kInt8, {64, 32});
#if defined(__aarch64__) && defined(__linux__)
  const bool dot = (getauxval(AT_HWCAP) & (1UL << 20)) != 0;  // HWCAP_ASIMDDP
  EXPECT_EQ(best_dyn_isa(l), dot ? DynIsa::kNeonDot : DynIsa::kReference);
  if (!dot) GTEST_SKIP() << "this aarch64 CPU has no dot-product extension";
#else
  EXPECT_NE(best_dyn_isa(l), DynIsa::kNeonDot);
#endif
  EXPECT_STREQ(dyn_isa_name(DynIsa::kNeonDot), "neondot");
}

// x86-64: the AVX-VNNI kernel (256-bit, int8) is among the kernels this CPU runs
// exactly where /proc/cpuinfo says avx_vnni (CPUID 7.1 EAX bit 4), so the tests above
// run it there; it is picked only where AVX-512 VNNI is not, and never for int4.
TEST(DynamicGemm, AvxVnniRunsWhereTheCpuHasIt) {
  const Layout int8 = default_layout(Storage::kInt8, {64, 32}), int4 = default_layout(Storage::kInt4, {64, 32});
  const std::vector<DynIsa> isas = runnable_dyn_isas(int8);
  const bool listed = std::find(isas.begin(), isas.end(), DynIsa::kAvxVnni) != isas.end();
#if defined(__x86_64__) && defined(__linux__)
  std::ifstream cpuinfo("/proc/cpuinfo");
  const std::string text((std::istreambuf_iterator<char>(cpuinfo)), std::istreambuf_iterator<char>());
  const bool has = text.find(" avx_vnni") != std::string::npos;
  EXPECT_EQ(listed, has);
  if (has) {
    EXPECT_TRUE(best_dyn_isa(int8) == DynIsa::kAvxVnni || best_dyn_isa(int8) == DynIsa::kAvx512Vnni);
  }
#else
  EXPECT_FALSE(listed);
#endif
  const std::vector<DynIsa> isas4 = runnable_dyn_isas(int4);
  EXPECT_EQ(std::find(isas4.begin(), isas4.end(), DynIsa::kAvxVnni), isas4.end());
  EXPECT_STREQ(dyn_isa_name(DynIsa::kAvxVnni), "avxvnni");
}

// The reference computes what dynamic_gemm.h says, from first principles here.
TEST(DynamicGemm, ReferenceQuantizesEachRowSymmetrically) {
  const Layout l = default_layout(Storage::kInt8, {4, 2});
  const float w[8] = {1, -1, 0.5f, 2, -0.25f, 1, 0, -2};
  const Quantized q = quantize(l, w);
  const float a[8] = {0.3f, -1.27f, 0.0f, 0.5f, 2, 2, 2, 2};
  float c[4];
  dynamic_gemm_reference(WeightView{&l, q.data.data(), q.scales.data()}, a, c, 2);
  for (size_t r = 0; r < 2; ++r) {
    float amax = 0;
    for (size_t k = 0; k < 4; ++k) amax = std::max(amax, std::fabs(a[r * 4 + k]));
    const float inv = 127.0f / amax, sa = amax / 127.0f;
    for (size_t n = 0; n < 2; ++n) {
      int32_t sum = 0;
      for (size_t k = 0; k < 4; ++k)
        sum += int32_t(std::nearbyint(a[r * 4 + k] * inv)) * int32_t(int8_t(q.data[k * 2 + n]));
      const float sw = reinterpret_cast<const float*>(q.scales.data())[n];
      EXPECT_EQ(c[r * 2 + n], (float(sum) * sa) * sw) << r << " " << n;
    }
  }
  // Within the two roundings of the exact product.
  EXPECT_NEAR(c[0], 0.3 * 1 - 1.27 * 0.5 + 0.5 * 0, 0.02);
}

// A NaN anywhere in a row refuses it, whatever follows it (a NaN first met, then a
// smaller finite value, once slipped through the portable loop as amax = 0).
TEST(DynamicGemm, PortableRowQuantizationRefusesEveryNonFiniteRow) {
  const float nan = std::nanf(""), inf = std::numeric_limits<float>::infinity();
  const std::vector<std::vector<float>> refused = {{1, nan, 0}, {nan, 0, 0}, {0, 0, nan}, {2, -inf, 1}, {inf, 0, 0}};
  for (const auto& row : refused) {
    int8_t q[3] = {1, 1, 1};
    float scale = 1;
    EXPECT_FALSE(quantize_row_portable(row.data(), row.size(), q, &scale)) << row[0] << " " << row[1] << " " << row[2];
    EXPECT_EQ(scale, 0.0f);
    EXPECT_EQ(q[0] | q[1] | q[2], 0);
    // The dispatched routine agrees.
    EXPECT_FALSE(quantize_row(row.data(), row.size(), q, &scale));
  }
  const float ok[3] = {0.5f, -1.0f, 0.25f};
  int8_t q[3];
  float scale = 0;
  ASSERT_TRUE(quantize_row_portable(ok, 3, q, &scale));
  EXPECT_EQ(scale, 1.0f / 127.0f);
  EXPECT_EQ(q[0], 64);
  EXPECT_EQ(q[1], -127);
  EXPECT_EQ(q[2], 32);
}

// VNNI's rows are quantized straight into its operand (q + 128 for int8, q and the
// blocks' sums for int4): the same scale, bytes and verdict as quantize_row, on rows
// of every length and kind.
TEST(DynamicGemm, VnniRowsAreQuantizedAsQuantizeRowDoes) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
      !__builtin_cpu_supports("avx512vnni"))
    GTEST_SKIP() << "no AVX-512 VNNI";
  const float nan = std::nanf(""), inf = std::numeric_limits<float>::infinity();
  std::vector<std::vector<float>> rows;
  for (size_t k : {size_t(1), size_t(15), size_t(16), size_t(17), size_t(64), size_t(100), size_t(256)})
    rows.push_back(random_weights(k, uint32_t(k)));
  rows.push_back({0, -0.0f, 0});
  rows.push_back({1e-40f, -2e-40f, 0});  // 127 / amax overflows
  rows.push_back({0.5f, -1.0f, 0.25f, 0.75f, -0.5f});
  std::vector<float> tail(33, 0.25f);
  tail[32] = nan;  // past the first 16 and 32
  rows.push_back(tail);
  rows.push_back({2, -inf, 1});
  for (const auto& row : rows) {
    std::vector<int8_t> q(row.size());
    std::vector<uint8_t> u(row.size() + 1, 7);
    float want = -1, got = -2;
    const bool ok = quantize_row_portable(row.data(), row.size(), q.data(), &want);
    EXPECT_EQ(detail::quantize_row_avx512(row.data(), row.size(), u.data(), true, row.size(), nullptr, &got), ok)
        << row.size();
    EXPECT_EQ(got, want) << row.size();
    for (size_t i = 0; i < row.size(); ++i) EXPECT_EQ(u[i], uint8_t(int(q[i]) + 128)) << row.size() << " at " << i;
    EXPECT_EQ(u[row.size()], 7) << "wrote past the row";
    // int4's operand: q itself, and the sums of blocks of 16.
    if (row.size() % 16 != 0) continue;
    std::vector<int32_t> sums(row.size() / 16, -1);
    EXPECT_EQ(detail::quantize_row_avx512(row.data(), row.size(), u.data(), false, 16, sums.data(), &got), ok);
    EXPECT_EQ(got, want);
    for (size_t b = 0; b < sums.size(); ++b) {
      int32_t sum = 0;
      for (size_t i = 16 * b; i < 16 * b + 16; ++i) {
        EXPECT_EQ(int8_t(u[i]), q[i]) << row.size() << " at " << i;
        sum += q[i];
      }
      EXPECT_EQ(sums[b], sum) << row.size() << " block " << b;
    }
  }
#else
  GTEST_SKIP() << "x86-64 only";
#endif
}

TEST(DynamicGemm, NonFiniteRowsRunInF32) {
  const Layout l = default_layout(Storage::kInt8, {3, 2});
  const float w[6] = {1, 2, 3, 4, 5, 6};
  const Quantized q = quantize(l, w);
  const float inf = std::numeric_limits<float>::infinity();
  const float a[6] = {1, std::nanf(""), 0, inf, 0, 0};
  float c[4];
  dynamic_gemm_reference(WeightView{&l, q.data.data(), q.scales.data()}, a, c, 2);
  EXPECT_TRUE(std::isnan(c[0]) && std::isnan(c[1]));
  EXPECT_EQ(c[2], inf);
  EXPECT_EQ(c[3], inf);
  // The kernel a Session runs does the same.
  ops::Attrs attrs;
  auto kernel = prepare_quantized(ops::OpId::MatMul, attrs, l, q.data.data(), q.scales.data(), best_gemm_isa(l),
                                  best_dyn_isa(l) == DynIsa::kReference
                                      ? nullptr
                                      : pack_weights(WeightView{&l, q.data.data(), q.scales.data()}, best_dyn_isa(l)));
  float out[4];
  TensorRef in[2], o[1];
  in[0] = TensorRef{DType::kF32, 2, {2, 3}, const_cast<float*>(a)};
  in[1] = TensorRef{DType::kF32, 2, {3, 2}, nullptr};
  o[0] = TensorRef{DType::kF32, 2, {2, 2}, out};
  ASSERT_TRUE(kernel->run(KernelContext{}, in, o).ok());
  EXPECT_TRUE(std::isnan(out[0]) && std::isnan(out[1]));
  EXPECT_EQ(out[2], inf);
}

// The Session's kernel (column tiles, non-finite rows) equals the reference.
TEST(DynamicGemm, DenseKernelEqualsTheReference) {
  for (Storage s : {Storage::kInt8, Storage::kInt4}) {
    const Layout l = default_layout(s, {84, 75});
    const std::vector<float> w = random_weights(84 * 75, 3);
    const Quantized q = quantize(l, w.data());
    const WeightView view{&l, q.data.data(), q.scales.data()};
    if (best_dyn_isa(l) == DynIsa::kReference) GTEST_SKIP() << "no dynamic SIMD kernel on this CPU";
    ops::Attrs attrs;
    auto kernel = prepare_quantized(ops::OpId::MatMul, attrs, l, q.data.data(), q.scales.data(), best_gemm_isa(l),
                                    pack_weights(view, best_dyn_isa(l)));
    EXPECT_NE(std::string(kernel->name()).find("dynamic"), std::string::npos) << kernel->name();
    std::vector<float> a = random_weights(6 * 84, 9), want(6 * 75), out(6 * 75);
    a[3 * 84 + 5] = std::nanf("");
    dynamic_gemm_reference(view, a.data(), want.data(), 6);
    TensorRef in[2], o[1];
    in[0] = TensorRef{DType::kF32, 2, {6, 84}, a.data()};
    in[1] = TensorRef{DType::kF32, 2, {84, 75}, nullptr};
    o[0] = TensorRef{DType::kF32, 2, {6, 75}, out.data()};
    ASSERT_TRUE(kernel->run(KernelContext{}, in, o).ok());
    for (size_t i = 0; i < out.size(); ++i) {
      if (i / 75 == 3) {
        EXPECT_TRUE(std::isnan(out[i]) && std::isnan(want[i])) << i;
      } else {
        ASSERT_EQ(out[i], want[i]) << storage_name(s) << " at " << i;
      }
    }
  }
}

// fully_connected on the packed kernels: the bias (and relu) in the store, tanh after
// it, the same values as the unfused nodes: sum + bias, then `v < 0 ? 0 : v` or tanh;
// a row with a NaN runs in f32 and gets the same epilogue.
TEST(DynamicGemm, FullyConnectedEpilogueIsTheUnfusedNodes) {
  for (Storage s : {Storage::kInt8, Storage::kInt4}) {
    const Layout l = default_layout(s, {64, 75});
    const std::vector<float> w = random_weights(64 * 75, 4);
    const Quantized q = quantize(l, w.data());
    const WeightView view{&l, q.data.data(), q.scales.data()};
    if (best_dyn_isa(l) == DynIsa::kReference) GTEST_SKIP() << "no dynamic SIMD kernel on this CPU";
    std::vector<float> bias = random_weights(75, 11);
    bias[7] = -1e4f;  // relu zeroes that column
    // Every kernel this CPU runs (VNNI's CPUs have AVX2; NEON dot on aarch64), one
    // row and several.
    for (DynIsa isa : runnable_dyn_isas(l)) {
      for (size_t m : {size_t(1), size_t(6)}) {
        std::vector<float> a = random_weights(m * 64, 10), want(m * 75);
        if (m > 1) a[3 * 64 + 5] = std::nanf("");
        dynamic_gemm_reference(view, a.data(), want.data(), m);
        for (int64_t act : {int64_t(ops::attr::kActNone), int64_t(ops::attr::kActRelu), int64_t(ops::attr::kActTanh)}) {
          ops::Attrs attrs;
          attrs.values.push_back(ops::AttrValue::Int(act));
          auto fc = prepare_quantized(ops::OpId::FullyConnected, attrs, l, q.data.data(), q.scales.data(),
                                      best_gemm_isa(l), pack_weights(view, isa));
          std::vector<float> out(m * 75);
          TensorRef in[3], o[1];
          in[0] = TensorRef{DType::kF32, 2, {int64_t(m), 64}, a.data()};
          in[1] = TensorRef{DType::kF32, 2, {64, 75}, nullptr};
          in[2] = TensorRef{DType::kF32, 1, {75}, bias.data()};
          o[0] = TensorRef{DType::kF32, 2, {int64_t(m), 75}, out.data()};
          ASSERT_TRUE(fc->run(KernelContext{}, in, o).ok());
          for (size_t i = 0; i < out.size(); ++i) {
            const float v = want[i] + bias[i % 75];
            if (std::isnan(v)) {
              EXPECT_TRUE(std::isnan(out[i])) << i;
            } else if (act == ops::attr::kActTanh) {  // the SIMD tanh kernel: within an ulp or two
              EXPECT_NEAR(out[i], std::tanh(v), 4e-7f) << storage_name(s) << " tanh at " << i;
            } else {
              ASSERT_EQ(out[i], act == ops::attr::kActRelu && v < 0.0f ? 0.0f : v)
                  << storage_name(s) << " " << dyn_isa_name(isa) << " activation " << act << " m=" << m << " at " << i;
            }
          }
        }
      }
    }
  }
}

// Rows in blocks of 16 run on AMX tiles where the CPU has them (the rest on VNNI's):
// bit for bit the reference, for K that is and is not a multiple of 4 and 64, N not a
// multiple of 16, and rows past whole blocks; fully_connected's epilogue included.
TEST(DynamicGemm, AmxRowBlocksEqualTheReference) {
  const Layout probe = default_layout(Storage::kInt8, {64, 16});
  if (best_dyn_isa(probe) != DynIsa::kAvx512Vnni) GTEST_SKIP() << "no AVX-512 VNNI";
  for (const auto& [k, n] : std::vector<std::pair<size_t, size_t>>{{64, 16}, {784, 40}, {130, 33}, {7, 70}, {256, 256}}) {
    const Layout l = default_layout(Storage::kInt8, {int64_t(k), int64_t(n)});
    const std::vector<float> w = random_weights(k * n, uint32_t(k + n));
    const Quantized q = quantize(l, w.data());
    const WeightView view{&l, q.data.data(), q.scales.data()};
    const auto packed = pack_weights(view, DynIsa::kAvx512Vnni);
    if (!packed->amx) GTEST_SKIP() << "no AMX here (or the OS refused its state)";
    for (size_t m : {size_t(16), size_t(33), size_t(64)}) {
      std::vector<float> a = random_weights(m * k, uint32_t(m * 3 + k));
      if (m > 17) std::fill(a.begin() + long(17 * k), a.begin() + long(18 * k), 0.0f);  // a zero row, second block
      if (m > 33) a[40 * k + 1] = std::nanf("");                             // a row that runs in f32
      std::vector<float> want(m * n), bias = random_weights(n, 5);
      dynamic_gemm_reference(view, a.data(), want.data(), m);
      ops::Attrs attrs;
      attrs.values.push_back(ops::AttrValue::Int(ops::attr::kActRelu));
      auto fc = prepare_quantized(ops::OpId::FullyConnected, attrs, l, q.data.data(), q.scales.data(),
                                  best_gemm_isa(l), packed);
      EXPECT_NE(std::string(fc->name()).find("+amx"), std::string::npos) << fc->name();
      std::vector<float> out(m * n);
      TensorRef in[3], o[1];
      in[0] = TensorRef{DType::kF32, 2, {int64_t(m), int64_t(k)}, a.data()};
      in[1] = TensorRef{DType::kF32, 2, {int64_t(k), int64_t(n)}, nullptr};
      in[2] = TensorRef{DType::kF32, 1, {int64_t(n)}, bias.data()};
      o[0] = TensorRef{DType::kF32, 2, {int64_t(m), int64_t(n)}, out.data()};
      ASSERT_TRUE(fc->run(KernelContext{}, in, o).ok());
      for (size_t i = 0; i < out.size(); ++i) {
        const float v = want[i] + bias[i % n];
        if (std::isnan(v)) {
          EXPECT_TRUE(std::isnan(out[i])) << i;
        } else {
          ASSERT_EQ(out[i], v < 0.0f ? 0.0f : v) << "k=" << k << " n=" << n << " m=" << m << " at " << i;
        }
      }
    }
  }
}

// The AVX-512 VNNI kernel cannot run on every CPU that builds it: its packing, the
// unsigned operands (int8: the activations + 128, taken back out with the weight
// sums; int4: the nibbles w + 8, taken back out with the activation sums) are
// checked by emulating vpdpbusd element by element here, against the reference. The
// NEON dot kernel shares the int8 weights' layout (int4: signed nibbles, element j of
// a step low and j + 32 high) with the activations as they are (sdot: signed x
// signed, no sums): the same emulation checks its packing on x86.
TEST(DynamicGemm, VnniPackingEmulatedEqualsTheReference) {
  for (DynIsa isa : {DynIsa::kAvx512Vnni, DynIsa::kNeonDot})
    for (Storage s : {Storage::kInt8, Storage::kInt4})
      for (size_t k : {7, 50, 84})
        for (size_t n : {5, 16, 40}) {
          Layout l = default_layout(s, {int64_t(k), int64_t(n)});
          const std::vector<float> w = random_weights(k * n, uint32_t(k + 3 * n));
          const Quantized q = quantize(l, w.data());
          const WeightView view{&l, q.data.data(), q.scales.data()};
          const size_t m = 3;
          const std::vector<float> a = random_weights(m * k, uint32_t(k));
          std::vector<float> want(m * n);
          dynamic_gemm_reference(view, a.data(), want.data(), m);
          const auto p = pack_weights(view, isa);
          const bool vnni = isa == DynIsa::kAvx512Vnni, i4 = s == Storage::kInt4;
          ASSERT_EQ(p->nr, 16u);
          ASSERT_EQ(p->colsum.size(), vnni && !i4 ? p->blocks * p->panels * 16 : 0);
          QuantizedRows rows;
          quantize_rows(*p, a.data(), m, &rows);
          const size_t steps = p->block_pad / 4, stride = rows.stride, npad = p->panels * 16;
          const size_t step_bytes = i4 ? 32 : 64;
          for (size_t r = 0; r < m; ++r)
            for (size_t col = 0; col < n; ++col) {
              const size_t pan = col / 16, c = col % 16;
              float acc = 0.0f;
              int32_t isum = 0;
              for (size_t b = 0; b < p->blocks; ++b) {
                uint32_t sum = 0;  // wraps as vpdpbusd does
                for (size_t t = 0; t < steps; ++t)
                  for (size_t kk = 0; kk < 4; ++kk) {
                    const size_t j = c * 4 + kk, at = r * stride + b * p->block_pad + 4 * t + kk;
                    const uint8_t* step = p->data.data() + pan * p->panel_bytes + (b * steps + t) * step_bytes;
                    int wv, av;
                    if (vnni && i4) {  // the nibble w + 8 (step t low, t + 1 high, 64 bytes a pair) by q
                      const uint8_t* pair = p->data.data() + pan * p->panel_bytes + (b * steps + t / 2 * 2) * step_bytes;
                      wv = t % 2 == 0 ? pair[j] & 0xF : pair[j] >> 4;
                      av = int8_t(rows.a8[at]);
                    } else if (vnni) {  // the int8 weight by q + 128
                      wv = int8_t(step[j]);
                      av = rows.a8[at];
                    } else {  // NEON: signed by signed
                      wv = i4 ? ((j < 32 ? step[j] & 0xF : step[j - 32] >> 4) ^ 8) - 8 : int8_t(step[j]);
                      av = int8_t(rows.a8[at]);
                    }
                    sum += uint32_t(av * wv);
                  }
                const uint32_t back = !vnni ? 0u
                                      : i4  ? uint32_t(rows.offset[r * p->blocks + b])
                                            : uint32_t(p->colsum[b * npad + col]);
                isum = int32_t(sum - back);
                if (i4) acc = std::fma(float(isum), p->scales[b * npad + col], acc);
              }
              const float got = i4 ? acc * rows.scale[r] : (float(isum) * rows.scale[r]) * p->scales[col];
              ASSERT_EQ(got, want[r * n + col]) << dyn_isa_name(isa) << " " << storage_name(s) << " k=" << k
                                                << " n=" << n << " r=" << r << " col=" << col;
            }
        }
}

}  // namespace
}  // namespace sg::kernels::quant
