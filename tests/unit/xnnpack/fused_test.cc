// fully_connected and conv2d_bias on the XNNPACK backend against their reference
// kernels, with constant and non-constant weights, relu and none, and NaN.
#include <limits>

#include "xnnpack/xnn_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;

ops::Attrs fc_attrs(int64_t act) {
  ops::Attrs a;
  a.values = {ops::AttrValue::Int(act)};
  return a;
}

void check_fully_connected(bool constant_weights, int64_t act, bool with_nan) {
  HostTensor w = HostTensor::random(DType::kF32, {7, 5}, 3, -1, 1);
  HostTensor b = HostTensor::random(DType::kF32, {5}, 4, -1, 1);
  std::vector<std::vector<HostTensor>> cases;
  uint32_t seed = 10;
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{3, 7}, {1, 7}, {2, 4, 7}, {0, 7}}) {
    HostTensor x = HostTensor::random(DType::kF32, shape, seed++, -1, 1);
    if (with_nan && x.numel() > 1) x.set(1, std::numeric_limits<double>::quiet_NaN());
    cases.push_back({x, w, b});
  }
  InputInfo xi = info_of(cases[0][0], false, true);
  xi.rank = 2;
  xi.shape[1] = 7;
  compare_cases(OpId::FullyConnected, fc_attrs(act),
                {xi, info_of(cases[0][1], constant_weights), info_of(cases[0][2], constant_weights)}, cases);
}

TEST(XnnpackFused, FullyConnectedConstantWeightsRelu) { check_fully_connected(true, ops::attr::kActRelu, false); }
TEST(XnnpackFused, FullyConnectedConstantWeightsNone) { check_fully_connected(true, ops::attr::kActNone, false); }
TEST(XnnpackFused, FullyConnectedInputWeightsRelu) { check_fully_connected(false, ops::attr::kActRelu, false); }
TEST(XnnpackFused, FullyConnectedKeepsNaNThroughRelu) { check_fully_connected(true, ops::attr::kActRelu, true); }

TEST(XnnpackFused, Conv2dBiasRelu) {
  ops::Attrs attrs = conv_attrs({1, 1}, {1, 1}, "SAME", 1);
  attrs.values.push_back(ops::AttrValue::Int(ops::attr::kActRelu));
  HostTensor k = HostTensor::random(DType::kF32, {3, 3, 2, 4}, 5, -1, 1);
  HostTensor b = HostTensor::random(DType::kF32, {4}, 6, -1, 1);
  std::vector<std::vector<HostTensor>> cases;
  uint32_t seed = 20;
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{1, 5, 5, 2}, {2, 7, 4, 2}}) {
    HostTensor x = HostTensor::random(DType::kF32, shape, seed++, -1, 1);
    if (seed == 22) x.set(3, std::numeric_limits<double>::quiet_NaN());
    cases.push_back({x, k, b});
  }
  InputInfo xi = info_of(cases[0][0], false, true);
  xi.shape[3] = 2;
  compare_cases(OpId::Conv2DBias, attrs, {xi, info_of(cases[0][1], true), info_of(cases[0][2], true)}, cases);
}

TEST(XnnpackFused, Conv2dBiasWithInputFilterUsesTheReference) {
  ops::Attrs attrs = conv_attrs({1, 1}, {1, 1}, "VALID", 1);
  attrs.values.push_back(ops::AttrValue::Int(ops::attr::kActNone));
  HostTensor x = HostTensor::random(DType::kF32, {1, 5, 5, 2}, 1, -1, 1);
  HostTensor k = HostTensor::random(DType::kF32, {3, 3, 2, 4}, 2, -1, 1);
  HostTensor b = HostTensor::random(DType::kF32, {4}, 3, -1, 1);
  ASSERT_TRUE(xnnpack_init().ok());
  EXPECT_EQ(xnnpack_prepare(OpId::Conv2DBias, attrs, std::vector<InputInfo>{info_of(x, false), info_of(k, false),
                                                                            info_of(b, true)}),
            nullptr);
}

}  // namespace
}  // namespace sg::kernels::testing
