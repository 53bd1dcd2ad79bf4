// conv2d and pooling kernels of the XNNPACK backend against the reference kernels,
// with input sizes that change between runs (the SAME padding is recomputed).
#include <cstring>
#include <limits>

#include "simd/simd.h"
#include "xnnpack/xnn_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;

struct ConvCase {
  const char* name;
  int64_t kh, kw, cin, cout, groups;
  std::vector<int64_t> stride, dilation;
  const char* padding;
};

class ConvTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvTest, MatchesReferenceAcrossInputSizes) {
  const ConvCase& c = GetParam();
  const ops::Attrs attrs = conv_attrs(c.stride, c.dilation, c.padding, c.groups);
  HostTensor filter = HostTensor::random(DType::kF32, {c.kh, c.kw, c.cin / c.groups, c.cout}, 7, -1, 1);
  // Odd and even sizes, a batch of 2, batch 0, and for SAME an input smaller than
  // the window (VALID rejects it in the shape rule).
  const bool same = std::string(c.padding) == "SAME";
  const std::vector<std::vector<int64_t>> inputs = {{1, 9, 9, c.cin},  {1, 8, 11, c.cin},
                                                    {2, 5, 6, c.cin},  {1, same ? 2 : 6, same ? 1 : 5, c.cin},
                                                    {0, 5, 5, c.cin},  {1, 16, 16, c.cin},
                                                    {1, 9, 9, c.cin}};
  std::vector<std::vector<HostTensor>> cases;
  uint32_t seed = 100;
  for (const auto& shape : inputs) {
    std::vector<HostTensor> in;
    in.push_back(HostTensor::random(DType::kF32, shape, seed++, -1, 1));
    in.push_back(filter);
    cases.push_back(std::move(in));
  }
  InputInfo x = info_of(cases[0][0], false, true);
  x.shape[3] = c.cin;
  // The filter constant: the copy in cases[0] (every case holds equal data).
  compare_cases(OpId::Conv2D, attrs, {x, info_of(cases[0][1], true)}, cases);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvTest,
    ::testing::Values(ConvCase{"k3_valid", 3, 3, 3, 4, 1, {1, 1}, {1, 1}, "VALID"},
                      ConvCase{"k3_same", 3, 3, 3, 4, 1, {1, 1}, {1, 1}, "SAME"},
                      ConvCase{"k3_same_stride2", 3, 3, 5, 8, 1, {2, 2}, {1, 1}, "SAME"},
                      ConvCase{"k2x4_same_stride_2x3", 2, 4, 3, 6, 1, {2, 3}, {1, 1}, "SAME"},
                      ConvCase{"k3_same_dilation2", 3, 3, 4, 4, 1, {1, 1}, {2, 2}, "SAME"},
                      ConvCase{"k3_valid_dilation_2x1", 3, 3, 4, 4, 1, {1, 1}, {2, 1}, "VALID"},
                      ConvCase{"groups2", 3, 3, 4, 6, 2, {1, 1}, {1, 1}, "SAME"},
                      ConvCase{"depthwise", 3, 3, 8, 8, 8, {1, 1}, {1, 1}, "SAME"},
                      ConvCase{"depthwise_stride2", 3, 3, 8, 8, 8, {2, 2}, {1, 1}, "SAME"},
                      ConvCase{"depthwise_multiplier2", 3, 3, 4, 8, 4, {1, 1}, {1, 1}, "VALID"},
                      ConvCase{"pointwise", 1, 1, 16, 24, 1, {1, 1}, {1, 1}, "VALID"},
                      ConvCase{"pointwise_stride2_same", 1, 1, 16, 24, 1, {2, 2}, {1, 1}, "SAME"},
                      ConvCase{"k5_wide", 5, 5, 32, 64, 1, {1, 1}, {1, 1}, "SAME"}),
    [](const auto& p) { return std::string(p.param.name); });

// Run-time filters: conv_gemm_test.cc.
TEST(XnnpackConv, EmptyOrUnusualFiltersAreLeftToTheReference) {
  ASSERT_TRUE(xnnpack_init().ok());
  HostTensor x = HostTensor::random(DType::kF32, {1, 5, 5, 3}, 1);
  HostTensor w = HostTensor::random(DType::kF32, {3, 3, 3, 4}, 2);
  const ops::Attrs attrs = conv_attrs({1, 1}, {1, 1}, "SAME", 1);
  EXPECT_NE(xnnpack_prepare(OpId::Conv2D, attrs, std::vector<InputInfo>{info_of(x, false), info_of(w, true)}), nullptr);
  HostTensor empty = HostTensor::random(DType::kF32, {3, 3, 0, 4}, 2);
  HostTensor x0 = HostTensor::random(DType::kF32, {1, 5, 5, 0}, 1);
  EXPECT_EQ(xnnpack_prepare(OpId::Conv2D, attrs, std::vector<InputInfo>{info_of(x0, false), info_of(empty, true)}),
            nullptr);
  EXPECT_EQ(xnnpack_prepare(OpId::Conv2D, conv_attrs({1, 1}, {1, 1}, "FULL", 1),
                            std::vector<InputInfo>{info_of(x, false), info_of(w, true)}),
            nullptr);
}

// ---- pooling -----------------------------------------------------------------

struct PoolCase {
  const char* name;
  std::vector<int64_t> size, stride;
  const char* padding;
};

class PoolTest : public ::testing::TestWithParam<std::tuple<OpId, PoolCase>> {};

TEST_P(PoolTest, MatchesReferenceAcrossInputSizes) {
  const auto& [op, c] = GetParam();
  const ops::Attrs attrs = pool_attrs(c.size, c.stride, c.padding);
  const bool same = std::string(c.padding) == "SAME";
  const std::vector<std::vector<int64_t>> inputs = {{1, 9, 9, 3},  {2, 8, 7, 3}, {1, same ? 1 : 3, same ? 1 : 4, 3},
                                                    {1, 10, 10, 5}, {0, 4, 4, 3}, {1, 4, 4, 0}, {1, 13, 6, 17}};
  std::vector<std::vector<HostTensor>> cases;
  uint32_t seed = 200;
  for (const auto& shape : inputs) {
    std::vector<HostTensor> in;
    in.push_back(HostTensor::random(DType::kF32, shape, seed++, -5, 5));
    cases.push_back(std::move(in));
  }
  InputInfo x = info_of(cases[0][0], false, true);
  compare_cases(op, attrs, {x}, cases);
}

INSTANTIATE_TEST_SUITE_P(
    Windows, PoolTest,
    ::testing::Combine(::testing::Values(OpId::MaxPool2D, OpId::AvgPool2D),
                       ::testing::Values(PoolCase{"k2_valid", {2, 2}, {2, 2}, "VALID"},
                                         PoolCase{"k2_same", {2, 2}, {2, 2}, "SAME"},
                                         PoolCase{"k3_stride1_same", {3, 3}, {1, 1}, "SAME"},
                                         PoolCase{"k3_stride2_same", {3, 3}, {2, 2}, "SAME"},
                                         PoolCase{"k3_stride2_valid", {3, 3}, {2, 2}, "VALID"},
                                         PoolCase{"k2x3_stride_1x2_same", {2, 3}, {1, 2}, "SAME"},
                                         PoolCase{"k2_stride3_valid", {2, 2}, {3, 3}, "VALID"})),
    [](const auto& p) {
      return std::string(ops::op_def(std::get<0>(p.param)).name) + "_" + std::get<1>(p.param).name;
    });

// Max pooling keeps the reference kernel's fold exactly: the later of equal values
// (so the sign of zeros), a NaN over every number after it, the last of two NaNs
// (told apart by their payloads), -inf windows; in the vector lanes and the tail.
TEST(XnnpackPool, MaxPoolingIsBitIdenticalToTheReference) {
  const ops::Attrs attrs = pool_attrs({2, 2}, {2, 2}, "VALID");
  HostTensor x(DType::kF32, {1, 2, 4, 17});
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t k = i % 7;
    x.set(i, k == 0 ? 0.0 : k == 1 ? -0.0 : k == 2 ? -inf : k == 3 && i % 5 == 0 ? nan : -double(i % 3));
  }
  // The first window of each channel (rows 0-1, columns 0-1): two NaNs, or a NaN
  // and then larger numbers.
  auto put_bits = [&](int64_t y, int64_t col, int64_t c, uint32_t bits) {
    std::memcpy(static_cast<char*>(x.ref().data) + size_t(((y * 4 + col) * 17 + c) * 4), &bits, 4);
  };
  for (int64_t c = 0; c < 17; ++c) {
    if (c % 3 == 0) {
      put_bits(0, 0, c, 0x7fc00001u + uint32_t(c));
      put_bits(1, 1, c, 0xffc00100u + uint32_t(c));
    } else if (c % 3 == 1) {
      put_bits(0, 0, c, 0x7fc00200u + uint32_t(c));
      for (int64_t t = 1; t < 4; ++t) x.set(((t / 2) * 4 + t % 2) * 17 + c, 100.0 + double(t));
    }
  }
  auto kernel = xnnpack_prepare(OpId::MaxPool2D, attrs, std::vector<InputInfo>{info_of(x, false)});
  ASSERT_NE(kernel, nullptr);
  if (simd::best_isa() == simd::Isa::kAvx512) {
    EXPECT_STREQ(kernel->name(), "sg:max_pool_f32(avx512)");
  } else if (simd::best_isa() == simd::Isa::kAvx2) {
    EXPECT_STREQ(kernel->name(), "sg:max_pool_f32(avx2)");
  }
  const std::vector<int64_t> shape = infer_shape(OpId::MaxPool2D, attrs, {x});
  HostTensor want(DType::kF32, shape), got(DType::kF32, shape);
  const TensorRef in = x.ref();
  TensorRef w = want.ref(), g = got.ref();
  ASSERT_TRUE(reference_kernel(OpId::MaxPool2D)(KernelContext{}, attrs, std::span<const TensorRef>(&in, 1),
                                                std::span<TensorRef>(&w, 1))
                  .ok());
  ASSERT_TRUE(kernel->run(KernelContext{}, std::span<const TensorRef>(&in, 1), std::span<TensorRef>(&g, 1)).ok());
  EXPECT_EQ(std::memcmp(g.data, w.data, size_t(want.numel()) * sizeof(float)), 0) << kernel->name();
}

// NaN and infinities as in NumPy: XNNPACK alone would give -inf for NaN (conv,
// average) or skip it (max).
TEST(XnnpackNn, NanAndInfinity) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  auto input = [&] {
    HostTensor x = HostTensor::random(DType::kF32, {1, 4, 4, 2}, 9);
    x.set(0, nan);
    x.set(13, inf);
    x.set(30, -inf);
    return x;
  };
  for (OpId op : {OpId::MaxPool2D, OpId::AvgPool2D}) {
    std::vector<std::vector<HostTensor>> cases(1);
    cases[0].push_back(input());
    const ops::Attrs attrs = pool_attrs({2, 2}, {2, 2}, "VALID");
    compare_cases(op, attrs, {info_of(cases[0][0], false)}, cases);
  }
  std::vector<std::vector<HostTensor>> cases(1);
  cases[0].push_back(input());
  cases[0].push_back(HostTensor::random(DType::kF32, {2, 2, 2, 3}, 10));
  compare_cases(OpId::Conv2D, conv_attrs({1, 1}, {1, 1}, "SAME", 1),
                {info_of(cases[0][0], false), info_of(cases[0][1], true)}, cases);
}

// A 1x1 window, which XNNPACK refuses, is either left to the reference or right.
TEST(XnnpackPool, OneByOneWindow) {
  ASSERT_TRUE(xnnpack_init().ok());
  for (OpId op : {OpId::MaxPool2D, OpId::AvgPool2D}) {
    std::vector<std::vector<HostTensor>> cases(1);
    cases[0].push_back(HostTensor::random(DType::kF32, {1, 4, 4, 3}, 1));
    const ops::Attrs attrs = pool_attrs({1, 1}, {2, 2}, "VALID");
    if (xnnpack_prepare(op, attrs, std::vector<InputInfo>{info_of(cases[0][0], false)}) != nullptr)
      compare_cases(op, attrs, {info_of(cases[0][0], false)}, cases);
  }
}

}  // namespace
}  // namespace sg::kernels::testing
