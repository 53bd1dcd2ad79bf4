// Reference kernels of the fused ops: activation(x @ w + b) and
// activation(conv2d(x, w) + b), NaN kept through relu and tanh.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernels/kernel_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(FullyConnected, AddsTheBiasThenRelu) {
  // x [2, 2] @ w [2, 3] = [[1, -2, 3], [nan, nan, nan]], + b [0.5, 0.5, -4]
  KernelTester t(OpId::FullyConnected);
  t.in(HostTensor::of(DType::kF32, {2, 2}, {1, 0, kNaN, 1}))
      .in(HostTensor::of(DType::kF32, {2, 3}, {1, -2, 3, 4, 5, 6}))
      .in(HostTensor::of(DType::kF32, {3}, {0.5, 0.5, -4}))
      .attr_int(ops::attr::kActRelu)
      .out(DType::kF32, {2, 3});
  t.expect({1.5, 0, 0, kNaN, kNaN, kNaN});
}

TEST(FullyConnected, NoActivationAndBatchDims) {
  KernelTester t(OpId::FullyConnected);
  t.in(HostTensor::of(DType::kF32, {2, 1, 2}, {1, 2, 3, 4}))
      .in(HostTensor::of(DType::kF32, {2, 1}, {1, -1}))
      .in(HostTensor::of(DType::kF32, {1}, {10}))
      .attr_int(ops::attr::kActNone)
      .out(DType::kF32, {2, 1, 1});
  t.expect({9, 9});
}

TEST(FullyConnected, AddsTheBiasThenTanh) {
  // x [2, 2] @ w [2, 2] = [[1, -2], [nan, nan]], + b [-1, 2.5]: tanh of [0, 0.5], NaN.
  KernelTester t(OpId::FullyConnected);
  t.in(HostTensor::of(DType::kF32, {2, 2}, {1, 0, kNaN, 1}))
      .in(HostTensor::of(DType::kF32, {2, 2}, {1, -2, 4, 5}))
      .in(HostTensor::of(DType::kF32, {2}, {-1, 2.5}))
      .attr_int(ops::attr::kActTanh)
      .out(DType::kF32, {2, 2});
  t.expect({0, double(std::tanh(0.5f)), kNaN, kNaN});
}

TEST(FullyConnected, RejectsABadBiasAndActivation) {
  KernelTester bad_bias(OpId::FullyConnected);
  bad_bias.in(HostTensor::of(DType::kF32, {1, 2}, {1, 2}))
      .in(HostTensor::of(DType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6}))
      .in(HostTensor::of(DType::kF32, {2}, {1, 2}))
      .attr_int(0)
      .out(DType::kF32, {1, 3});
  EXPECT_EQ(bad_bias.run().code(), StatusCode::kInternal);
  KernelTester bad_act(OpId::FullyConnected);
  bad_act.in(HostTensor::of(DType::kF32, {1, 2}, {1, 2}))
      .in(HostTensor::of(DType::kF32, {2, 1}, {1, 2}))
      .in(HostTensor::of(DType::kF32, {1}, {1}))
      .attr_int(7)
      .out(DType::kF32, {1, 1});
  EXPECT_EQ(bad_act.run().code(), StatusCode::kInternal);
}

TEST(Conv2DBias, AddsTheBiasPerChannelThenRelu) {
  // A 1x1 filter: out[..., c] = x * w[c] + b[c].
  KernelTester t(OpId::Conv2DBias);
  t.in(HostTensor::of(DType::kF32, {1, 1, 2, 1}, {1, -1}))
      .in(HostTensor::of(DType::kF32, {1, 1, 1, 2}, {2, 3}))
      .in(HostTensor::of(DType::kF32, {2}, {1, -1}))
      .attr_ints({1, 1})
      .attr_ints({1, 1})
      .attr_string("VALID")
      .attr_int(1)
      .attr_int(ops::attr::kActRelu)
      .out(DType::kF32, {1, 1, 2, 2});
  t.expect({3, 2, 0, 0});
}

}  // namespace
}  // namespace sg::kernels::testing
