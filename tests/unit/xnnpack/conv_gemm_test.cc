// conv2d / conv2d_bias on our packed GEMM over gathered patches (conv_gemm.cc)
// against the reference kernel: SAME borders, strides, dilations, VALID, a batch,
// bias and relu, NaN (the reference runs it), and which convolutions it takes.
#include <limits>

#include "simd/simd.h"
#include "xnnpack/xnn_common.h"
#include "xnnpack/xnn_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;

// Our GEMM takes constant 64-channel filters on AVX-512 and AVX2 CPUs.
bool have_our_gemm() { return xnn::packed_gemm_isa(64).has_value(); }

struct Window {
  const char* name;
  int64_t kh, kw;
  std::vector<int64_t> stride, dilation;
  const char* padding;
};

// Prepares on the static shape of `x` and checks the kernel is ours, then compares.
void expect_ours(OpId op, const ops::Attrs& attrs, std::vector<HostTensor> in, const std::string& what) {
  SCOPED_TRACE(what);
  std::vector<std::vector<HostTensor>> cases(1);
  cases[0] = std::move(in);
  // The constants' InputInfo point at the tensors the cases hold.
  std::vector<InputInfo> infos = {info_of(cases[0][0], false)};
  for (size_t k = 1; k < cases[0].size(); ++k) infos.push_back(info_of(cases[0][k], true));
  auto kernel = xnnpack_prepare(op, attrs, infos);
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(std::string(kernel->name()).rfind("sg:conv_gemm_f32", 0), 0u) << kernel->name();
  compare_cases(op, attrs, infos, cases);
}

TEST(ConvGemm, WindowsPaddingsAndStrides) {
  if (!have_our_gemm()) GTEST_SKIP() << "our GEMM needs AVX-512 or AVX2";
  const Window windows[] = {{"3x3 same", 3, 3, {1, 1}, {1, 1}, "SAME"},
                            {"3x3 valid", 3, 3, {1, 1}, {1, 1}, "VALID"},
                            {"3x3 same stride 2", 3, 3, {2, 2}, {1, 1}, "SAME"},
                            {"2x4 same stride 2x3", 2, 4, {2, 3}, {1, 1}, "SAME"},
                            {"3x3 same dilation 2", 3, 3, {1, 1}, {2, 2}, "SAME"},
                            {"3x3 valid dilation 2x1", 3, 3, {1, 1}, {2, 1}, "VALID"},
                            {"1x1", 1, 1, {1, 1}, {1, 1}, "VALID"}};
  uint32_t seed = 1;
  for (const Window& w : windows)
    for (const std::vector<int64_t>& shape : {std::vector<int64_t>{1, 8, 8, 32}, {2, 7, 9, 5}})
      for (int64_t cout : {64, 96}) {
        HostTensor x = HostTensor::random(DType::kF32, shape, seed++, -1, 1);
        HostTensor f = HostTensor::random(DType::kF32, {w.kh, w.kw, shape[3], cout}, seed++, -1, 1);
        expect_ours(OpId::Conv2D, conv_attrs(w.stride, w.dilation, w.padding, 1), {x, f},
                    std::string(w.name) + " " + shape_string(shape) + " -> " + std::to_string(cout));
      }
}

TEST(ConvGemm, BiasAndRelu) {
  if (!have_our_gemm()) GTEST_SKIP() << "our GEMM needs AVX-512 or AVX2";
  for (int64_t act : {ops::attr::kActNone, ops::attr::kActRelu}) {
    ops::Attrs attrs = conv_attrs({1, 1}, {1, 1}, "SAME", 1);
    attrs.values.push_back(ops::AttrValue::Int(act));
    HostTensor x = HostTensor::random(DType::kF32, {1, 8, 8, 32}, 3, -1, 1);
    HostTensor f = HostTensor::random(DType::kF32, {3, 3, 32, 64}, 4, -1, 1);
    HostTensor b = HostTensor::random(DType::kF32, {64}, 5, -1, 1);
    expect_ours(OpId::Conv2DBias, attrs, {x, f, b}, act == ops::attr::kActRelu ? "relu" : "no activation");
  }
}

TEST(ConvGemm, NanAndHugeInputsRunTheReference) {
  if (!have_our_gemm()) GTEST_SKIP() << "our GEMM needs AVX-512 or AVX2";
  ops::Attrs attrs = conv_attrs({1, 1}, {1, 1}, "SAME", 1);
  attrs.values.push_back(ops::AttrValue::Int(ops::attr::kActRelu));
  HostTensor f = HostTensor::random(DType::kF32, {3, 3, 32, 64}, 4, -1, 1);
  HostTensor b = HostTensor::random(DType::kF32, {64}, 5, -1, 1);
  HostTensor x = HostTensor::random(DType::kF32, {1, 8, 8, 32}, 6, -1, 1);
  x.set(40, std::numeric_limits<double>::quiet_NaN());
  x.set(41, std::numeric_limits<double>::infinity());
  expect_ours(OpId::Conv2DBias, attrs, {x, f, b}, "NaN and inf");
  HostTensor big = HostTensor::random(DType::kF32, {1, 8, 8, 32}, 7, -1, 1);
  big.set(5, 3e38);
  expect_ours(OpId::Conv2DBias, attrs, {big, f, b}, "overflow");
}

TEST(ConvGemm, RunTimeFiltersArePackedEveryRun) {
  if (simd::best_isa() == simd::Isa::kBaseline) GTEST_SKIP() << "our GEMM needs AVX-512 or AVX2";
  const Window windows[] = {{"3x3 same", 3, 3, {1, 1}, {1, 1}, "SAME"},
                            {"3x3 same stride 2", 3, 3, {2, 2}, {1, 1}, "SAME"},
                            {"2x4 valid dilation 2x1", 2, 4, {1, 1}, {2, 1}, "VALID"}};
  uint32_t seed = 500;
  for (const Window& w : windows) {
    SCOPED_TRACE(w.name);
    const ops::Attrs attrs = conv_attrs(w.stride, w.dilation, w.padding, 1);
    // Input sizes change between runs (symbolic dims), and so do the filter's values;
    // a NaN in the last filter sends that run to the reference kernel.
    std::vector<std::vector<HostTensor>> cases;
    for (const std::vector<int64_t>& shape : {std::vector<int64_t>{1, 9, 9, 6}, {2, 7, 12, 6}, {1, 16, 16, 6}}) {
      HostTensor f = HostTensor::random(DType::kF32, {w.kh, w.kw, 6, 10}, seed++, -1, 1);
      cases.push_back({HostTensor::random(DType::kF32, shape, seed++, -1, 1), f});
    }
    cases.back()[1].set(7, std::numeric_limits<double>::quiet_NaN());
    InputInfo x = info_of(cases[0][0], false, true);
    x.shape[3] = 6;
    const std::vector<InputInfo> infos = {x, info_of(cases[0][1], false)};
    auto kernel = xnnpack_prepare(OpId::Conv2D, attrs, infos);
    ASSERT_NE(kernel, nullptr);
    EXPECT_NE(std::string(kernel->name()).find("run-time filter"), std::string::npos) << kernel->name();
    compare_cases(OpId::Conv2D, attrs, infos, cases);
  }
}

// A run-time filter's panels are allocated at prepare, from the declared shape
// alone: a declared filter of 3x3x65536x65536 (144 GiB) gets no kernel of ours,
// and nothing is allocated for it (the graph loader's fuzzer found this).
TEST(ConvGemm, HugeDeclaredRunTimeFiltersAllocateNothing) {
  InputInfo x;
  x.dtype = DType::kF32;
  x.rank = 4;
  const int64_t x_shape[] = {1, 8, 8, 65536}, f_shape[] = {3, 3, 65536, 65536};
  std::copy(std::begin(x_shape), std::end(x_shape), x.shape);
  InputInfo f;
  f.dtype = DType::kF32;
  f.rank = 4;
  std::copy(std::begin(f_shape), std::end(f_shape), f.shape);
  auto kernel = xnnpack_prepare(OpId::Conv2D, conv_attrs({1, 1}, {1, 1}, "SAME", 1), std::vector<InputInfo>{x, f});
  const std::string name = kernel != nullptr ? std::string(kernel->name()) : "none";
  EXPECT_EQ(name.find("conv_gemm"), std::string::npos) << name;
}

TEST(ConvGemm, LeavesOtherConvolutionsToXnnpack) {
  const auto name_for = [](std::vector<int64_t> x_shape, int64_t cout, bool symbolic, int64_t groups = 1) {
    HostTensor x(DType::kF32, x_shape);
    HostTensor f = HostTensor::random(DType::kF32, {3, 3, x_shape[3] / groups, cout}, 1, -1, 1);
    auto k = xnnpack_prepare(OpId::Conv2D, conv_attrs({1, 1}, {1, 1}, "SAME", groups),
                             std::vector<InputInfo>{info_of(x, false, symbolic), info_of(f, true)});
    return k == nullptr ? std::string("none") : std::string(k->name());
  };
  // Too few channels: under 64 on AVX-512, under 32 on AVX2.
  EXPECT_EQ(name_for({1, 16, 16, 16}, simd::best_isa() == simd::Isa::kAvx2 ? 16 : 32, false),
            "xnnpack:convolution2d_nhwc_f32");
  if (simd::best_isa() == simd::Isa::kAvx2) {
    EXPECT_EQ(name_for({1, 16, 16, 16}, 32, false), "sg:conv_gemm_f32(avx2)");
  }
  EXPECT_EQ(name_for({1, 56, 56, 64}, 64, false), "xnnpack:convolution2d_nhwc_f32");  // patches beyond L2
  EXPECT_EQ(name_for({1, 8, 8, 32}, 64, true), "xnnpack:convolution2d_nhwc_f32");     // symbolic dims
  EXPECT_EQ(name_for({1, 8, 8, 64}, 64, false, 2), "xnnpack:convolution2d_nhwc_f32");  // groups
}

}  // namespace
}  // namespace sg::kernels::testing
