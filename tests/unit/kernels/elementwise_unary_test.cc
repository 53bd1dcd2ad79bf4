// Elementwise unary kernels and where/clip against float64 references.
#include <cmath>
#include <functional>
#include <limits>

#include "kernels/kernel_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;
using Fn = std::function<double(double)>;

void check_unary(OpId op, const Fn& fn, DType in, DType out, double lo, double hi, double rtol = -1,
                 double atol = 0) {
  SCOPED_TRACE(::testing::Message() << "op " << int(op) << " " << dtype_name(in));
  KernelTester t(op);
  t.in(HostTensor::random(in, {3, 17}, 5, lo, hi)).out(out, {3, 17});
  std::vector<double> want = t.inputs()[0].values();
  for (double& v : want) v = fn(v);
  t.expect(want, rtol, atol);
}

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double gelu(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double sign(double x) { return double((x > 0) - (x < 0)); }

TEST(ElementwiseUnary, FloatOpsMatchFloat64) {
  const DType f = DType::kF32;
  check_unary(OpId::Neg, [](double x) { return -x; }, f, f, -3, 3);
  check_unary(OpId::Abs, [](double x) { return std::fabs(x); }, f, f, -3, 3);
  check_unary(OpId::Exp, [](double x) { return std::exp(x); }, f, f, -5, 5, 4e-6);
  check_unary(OpId::Log, [](double x) { return std::log(x); }, f, f, 0.1, 5, 4e-6, 1e-7);
  check_unary(OpId::Sqrt, [](double x) { return std::sqrt(x); }, f, f, 0, 5);
  check_unary(OpId::Rsqrt, [](double x) { return 1 / std::sqrt(x); }, f, f, 0.1, 5, 4e-6);
  check_unary(OpId::Sin, [](double x) { return std::sin(x); }, f, f, -4, 4, 4e-6, 1e-7);
  check_unary(OpId::Cos, [](double x) { return std::cos(x); }, f, f, -4, 4, 4e-6, 1e-7);
  check_unary(OpId::Tanh, [](double x) { return std::tanh(x); }, f, f, -4, 4, 4e-6, 1e-7);
  check_unary(OpId::Sigmoid, sigmoid, f, f, -30, 30, 4e-6, 1e-7);
  check_unary(OpId::Relu, [](double x) { return std::max(x, 0.0); }, f, f, -3, 3);
  check_unary(OpId::Gelu, gelu, f, f, -5, 5, 4e-6, 1e-7);
  check_unary(OpId::Floor, [](double x) { return std::floor(x); }, f, f, -3, 3);
  check_unary(OpId::Ceil, [](double x) { return std::ceil(x); }, f, f, -3, 3);
  check_unary(OpId::Round, [](double x) { return std::nearbyint(x); }, f, f, -3, 3);
  check_unary(OpId::Sign, sign, f, f, -3, 3);
  check_unary(OpId::Square, [](double x) { return x * x; }, f, f, -3, 3);
  check_unary(OpId::IsNan, [](double) { return 0.0; }, f, DType::kBool, -3, 3);
  check_unary(OpId::LogicalNot, [](double x) { return double(x == 0); }, DType::kBool, DType::kBool, 0, 1);
}

TEST(ElementwiseUnary, F16ComputesInFloat) {
  const DType h = DType::kF16;
  check_unary(OpId::Sigmoid, sigmoid, h, h, -6, 6, 2e-3, 1e-4);
  check_unary(OpId::Gelu, gelu, h, h, -4, 4, 2e-3, 1e-3);
  check_unary(OpId::Exp, [](double x) { return std::exp(x); }, h, h, -3, 3);
}

TEST(ElementwiseUnary, IntegerOperands) {
  for (DType i : {DType::kI32, DType::kI64}) {
    check_unary(OpId::Neg, [](double x) { return -x; }, i, i, -9, 9);
    check_unary(OpId::Abs, [](double x) { return std::fabs(x); }, i, i, -9, 9);
    check_unary(OpId::Sign, sign, i, i, -9, 9);
    check_unary(OpId::Square, [](double x) { return x * x; }, i, i, -9, 9);
    check_unary(OpId::Relu, [](double x) { return std::max(x, 0.0); }, i, i, -9, 9);
    check_unary(OpId::Floor, [](double x) { return x; }, i, i, -9, 9);
    // Transcendental ops of integers give f32 (SPEC §3).
    check_unary(OpId::Exp, [](double x) { return std::exp(x); }, i, DType::kF32, -9, 9);
    check_unary(OpId::Sqrt, [](double x) { return std::sqrt(x); }, i, DType::kF32, 0, 99);
    check_unary(OpId::IsNan, [](double) { return 0.0; }, i, DType::kBool, -9, 9);
    check_unary(OpId::LogicalNot, [](double x) { return double(x == 0); }, i, DType::kBool, -1, 1);
  }
  const double min32 = std::numeric_limits<int32_t>::min();
  KernelTester(OpId::Neg).in(HostTensor::of(DType::kI32, {1}, {min32})).out(DType::kI32, {1}).expect({min32});
  KernelTester(OpId::Abs).in(HostTensor::of(DType::kI32, {1}, {min32})).out(DType::kI32, {1}).expect({min32});
  KernelTester(OpId::Square).in(HostTensor::of(DType::kI32, {1}, {65536})).out(DType::kI32, {1}).expect({0});
}

TEST(ElementwiseUnary, SpecialValues) {
  const double nan = std::nan("");
  KernelTester(OpId::Round)
      .in(HostTensor::of(DType::kF32, {6}, {0.5, 1.5, 2.5, -0.5, -1.5, 2.6}))
      .out(DType::kF32, {6})
      .expect({0, 2, 2, -0.0, -2, 3});
  KernelTester(OpId::Sign).in(HostTensor::of(DType::kF32, {4}, {nan, -0.0, 3, -2})).out(DType::kF32, {4})
      .expect({nan, 0, 1, -1});
  KernelTester(OpId::IsNan).in(HostTensor::of(DType::kF32, {3}, {nan, INFINITY, 0})).out(DType::kBool, {3})
      .expect({1, 0, 0});
  KernelTester(OpId::Relu).in(HostTensor::of(DType::kF32, {2}, {nan, -INFINITY})).out(DType::kF32, {2})
      .expect({nan, 0});
  KernelTester(OpId::Sigmoid).in(HostTensor::of(DType::kF32, {3}, {-200, 200, 0})).out(DType::kF32, {3})
      .expect({0, 1, 0.5});
  KernelTester(OpId::Log).in(HostTensor::of(DType::kF32, {2}, {0, -1})).out(DType::kF32, {2})
      .expect({-INFINITY, nan});
  KernelTester(OpId::Exp).in(HostTensor(DType::kF32, {0, 4})).out(DType::kF32, {0, 4}).expect({});
}

TEST(WhereClip, WhereBroadcastsAllThree) {
  KernelTester t(OpId::Where);
  t.in(HostTensor::random(DType::kBool, {3, 1}, 1))
      .in(HostTensor::random(DType::kF32, {4}, 2))
      .in(HostTensor::random(DType::kF32, {2, 1, 1}, 3))
      .out(DType::kF32, {2, 3, 4});
  const auto& in = t.inputs();
  t.expect(broadcast_reference({2, 3, 4}, {&in[0], &in[1], &in[2]},
                               [](const std::vector<double>& v) { return v[0] ? v[1] : v[2]; }));
  KernelTester(OpId::Where)
      .in(HostTensor::of(DType::kBool, {3}, {1, 0, 1}))
      .in(HostTensor::of(DType::kI64, {3}, {1, 2, 3}))
      .in(HostTensor::scalar(DType::kI64, -1))
      .out(DType::kI64, {3})
      .expect({1, -1, 3});
}

TEST(WhereClip, ClipIsMinimumOfMaximum) {
  KernelTester t(OpId::Clip);
  t.in(HostTensor::random(DType::kF32, {5, 6}, 1, -3, 3))
      .in(HostTensor::random(DType::kF32, {6}, 2, -2, 0))
      .in(HostTensor::random(DType::kF32, {5, 1}, 3, 0, 2))
      .out(DType::kF32, {5, 6});
  const auto& in = t.inputs();
  t.expect(broadcast_reference({5, 6}, {&in[0], &in[1], &in[2]},
                               [](const std::vector<double>& v) { return std::min(std::max(v[0], v[1]), v[2]); }));
  KernelTester(OpId::Clip)
      .in(HostTensor::of(DType::kI32, {5}, {-5, -1, 0, 3, 9}))
      .in(HostTensor::scalar(DType::kI32, -1))
      .in(HostTensor::scalar(DType::kI32, 4))
      .out(DType::kI32, {5})
      .expect({-1, -1, 0, 3, 4});
  KernelTester(OpId::Clip)
      .in(HostTensor::of(DType::kF32, {2}, {std::nan(""), 7}))
      .in(HostTensor::scalar(DType::kF32, 0))
      .in(HostTensor::scalar(DType::kF32, 1))
      .out(DType::kF32, {2})
      .expect({std::nan(""), 1});
}

}  // namespace
}  // namespace sg::kernels::testing
