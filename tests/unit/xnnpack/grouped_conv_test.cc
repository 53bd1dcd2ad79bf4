// conv2d / conv2d_bias with a run-time filter and groups > 1 (depthwise_conv.cc)
// against the reference kernel: depthwise with one and with two outputs per
// group, grouped filters of several input channels, SAME and VALID borders,
// strides and dilations, bias and relu, 1 and 2 threads, new filters and input
// sizes on every run; NaN in the filter and a huge input run the reference.
#include <limits>
#include <string>
#include <vector>

#include "xnnpack/xnn_common.h"
#include "xnnpack/xnn_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;

ops::Attrs conv_bias_attrs(std::vector<int64_t> stride, std::vector<int64_t> dilation, const std::string& padding,
                           int64_t groups, int64_t act) {
  ops::Attrs a = conv_attrs(std::move(stride), std::move(dilation), padding, groups);
  a.values.push_back(ops::AttrValue::Int(act));
  return a;
}

struct Case {
  const char* name;
  int64_t kh, kw;
  std::vector<int64_t> stride, dilation;
  const char* padding;
  int64_t groups, cin_g, cout;
};

void check(const Case& c, bool bias, int64_t act) {
  SCOPED_TRACE(std::string(c.name) + (bias ? " +bias" : "") + (act == ops::attr::kActRelu ? " +relu" : ""));
  const int64_t cin = c.groups * c.cin_g;
  const ops::Attrs attrs = bias ? conv_bias_attrs(c.stride, c.dilation, c.padding, c.groups, act)
                                : conv_attrs(c.stride, c.dilation, c.padding, c.groups);
  const OpId op = bias ? OpId::Conv2DBias : OpId::Conv2D;
  uint32_t seed = uint32_t(c.kh * 100 + c.cout);
  std::vector<std::vector<HostTensor>> cases;
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{1, 9, 9, cin}, {2, 7, 12, cin}, {1, 16, 16, cin}}) {
    std::vector<HostTensor> in = {HostTensor::random(DType::kF32, shape, seed++, -1, 1),
                                  HostTensor::random(DType::kF32, {c.kh, c.kw, c.cin_g, c.cout}, seed++, -1, 1)};
    if (bias) in.push_back(HostTensor::random(DType::kF32, {c.cout}, seed++, -1, 1));
    cases.push_back(std::move(in));
  }
  InputInfo x = info_of(cases[0][0], false, true);
  x.shape[3] = cin;
  std::vector<InputInfo> infos = {x, info_of(cases[0][1], false)};
  if (bias) infos.push_back(info_of(cases[0][2], false));
  auto kernel = xnnpack_prepare(op, attrs, infos);
  ASSERT_NE(kernel, nullptr);
  EXPECT_NE(std::string(kernel->name()).find(c.cin_g == 1 ? "sg:depthwise_conv_f32" : "sg:grouped_conv_f32"),
            std::string::npos)
      << kernel->name();
  compare_cases(op, attrs, infos, cases);
}

TEST(GroupedConvRunTime, DepthwiseAndGroupedFilters) {
  ASSERT_TRUE(xnnpack_init().ok());
  const Case cases[] = {
      {"depthwise 3x3 same", 3, 3, {1, 1}, {1, 1}, "SAME", 19, 1, 19},
      {"depthwise 3x3 same stride 2", 3, 3, {2, 2}, {1, 1}, "SAME", 32, 1, 32},
      {"depthwise x2 2x4 valid dilation 2x1", 2, 4, {1, 1}, {2, 1}, "VALID", 5, 1, 10},
      {"2 groups of 3 -> 4", 3, 3, {1, 1}, {1, 1}, "SAME", 2, 3, 8},
      {"4 groups of 2 -> 1, 5x5 stride 2", 5, 5, {2, 2}, {1, 1}, "SAME", 4, 2, 4},
  };
  int v = 0;
  for (const Case& c : cases) {
    const int k = v++ % 3;
    check(c, k != 0, k == 2 ? ops::attr::kActRelu : ops::attr::kActNone);
  }
}

TEST(GroupedConvRunTime, NonFiniteAndHugeValuesRunTheReference) {
  ASSERT_TRUE(xnnpack_init().ok());
  const ops::Attrs attrs = conv_attrs({1, 1}, {1, 1}, "SAME", 8);
  HostTensor x = HostTensor::random(DType::kF32, {1, 6, 6, 8}, 1, -1, 1);
  HostTensor f = HostTensor::random(DType::kF32, {3, 3, 1, 8}, 2, -1, 1);
  std::vector<InputInfo> infos = {info_of(x, false), info_of(f, false)};
  std::vector<std::vector<HostTensor>> cases = {{x, f}, {x, f}, {x, f}, {x, f}};
  cases[0][1].set(5, std::numeric_limits<double>::quiet_NaN());
  cases[1][0].set(9, std::numeric_limits<double>::infinity());
  cases[2][0].set(3, 3e38);
  compare_cases(OpId::Conv2D, attrs, infos, cases);
}

// A run-time filter with its bias: one kernel of ours adds the bias and relu.
TEST(GroupedConvRunTime, FusedBiasRunsInOurKernels) {
  ASSERT_TRUE(xnnpack_init().ok());
  if (simd::best_isa() == simd::Isa::kBaseline) GTEST_SKIP() << "our GEMM needs AVX-512 or AVX2";
  HostTensor x = HostTensor::random(DType::kF32, {1, 8, 8, 16}, 1, -1, 1);
  HostTensor f = HostTensor::random(DType::kF32, {3, 3, 16, 32}, 2, -1, 1);
  HostTensor b = HostTensor::random(DType::kF32, {32}, 3, -1, 1);
  const ops::Attrs attrs = conv_bias_attrs({1, 1}, {1, 1}, "SAME", 1, ops::attr::kActRelu);
  std::vector<InputInfo> infos = {info_of(x, false), info_of(f, false), info_of(b, false)};
  auto kernel = xnnpack_prepare(OpId::Conv2DBias, attrs, infos);
  ASSERT_NE(kernel, nullptr);
  EXPECT_STREQ(kernel->name(), (std::string("sg:conv_gemm_f32(") +
                                (simd::best_isa() == simd::Isa::kAvx512 ? "avx512" : "avx2") +
                                ",run-time filter)+bias+relu")
                                   .c_str());
  std::vector<std::vector<HostTensor>> cases = {{x, f, b}};
  compare_cases(OpId::Conv2DBias, attrs, infos, cases);
}

}  // namespace
}  // namespace sg::kernels::testing
