// Elementwise binary kernels: every op against a float64 reference, broadcasting,
// integer wrap-around, floor semantics and the integer error cases.
#include <cmath>
#include <functional>
#include <limits>

#include "kernels/kernel_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;
using Shape = std::vector<int64_t>;
using Fn = std::function<double(double, double)>;

double py_floordiv(double a, double b) { return std::floor(a / b); }
double py_mod(double a, double b) {
  const double m = std::fmod(a, b);
  return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
}

struct BinaryCase {
  OpId op;
  Fn fn;
  bool comparison = false;
};

std::vector<BinaryCase> arithmetic_cases() {
  return {
      {OpId::Add, [](double a, double b) { return a + b; }},
      {OpId::Sub, [](double a, double b) { return a - b; }},
      {OpId::Mul, [](double a, double b) { return a * b; }},
      {OpId::Maximum, [](double a, double b) { return std::max(a, b); }},
      {OpId::Minimum, [](double a, double b) { return std::min(a, b); }},
      {OpId::Less, [](double a, double b) { return double(a < b); }, true},
      {OpId::LessEqual, [](double a, double b) { return double(a <= b); }, true},
      {OpId::Greater, [](double a, double b) { return double(a > b); }, true},
      {OpId::GreaterEqual, [](double a, double b) { return double(a >= b); }, true},
      {OpId::Equal, [](double a, double b) { return double(a == b); }, true},
      {OpId::NotEqual, [](double a, double b) { return double(a != b); }, true},
  };
}

void check_broadcast(OpId op, const Fn& fn, DType in, DType out, const Shape& a_shape,
                     const Shape& b_shape, const Shape& out_shape, double lo = -4, double hi = 4) {
  SCOPED_TRACE(::testing::Message() << "op " << int(op) << " " << dtype_name(in));
  KernelTester t(op);
  t.in(HostTensor::random(in, a_shape, 11, lo, hi)).in(HostTensor::random(in, b_shape, 12, lo, hi)).out(out, out_shape);
  const auto want = broadcast_reference(out_shape, {&t.inputs()[0], &t.inputs()[1]},
                                        [&](const std::vector<double>& v) { return fn(v[0], v[1]); });
  t.expect(want);
}

TEST(ElementwiseBinary, EveryOpOnF32AndI32WithBroadcasting) {
  const std::vector<std::vector<Shape>> shapes = {
      {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}},  // equal
      {{2, 3, 4}, {4}, {2, 3, 4}},        // trailing vector
      {{2, 1, 4}, {3, 1}, {2, 3, 4}},     // both broadcast
      {{}, {5}, {5}},                     // scalar left
      {{5, 1}, {}, {5, 1}},               // scalar right, size-1 dim
      {{3, 1, 2}, {1, 4, 1}, {3, 4, 2}},
      {{0, 3}, {3}, {0, 3}},              // size 0
      {{1}, {1}, {1}},
  };
  for (const BinaryCase& c : arithmetic_cases())
    for (DType dt : {DType::kF32, DType::kI32, DType::kI64})
      for (const auto& s : shapes)
        check_broadcast(c.op, c.fn, dt, c.comparison ? DType::kBool : dt, s[0], s[1], s[2]);
}

TEST(ElementwiseBinary, DivAndPowOnFloats) {
  check_broadcast(OpId::Div, [](double a, double b) { return a / b; }, DType::kF32, DType::kF32, {4, 5},
                  {5}, {4, 5}, 0.5, 3);
  check_broadcast(OpId::Pow, [](double a, double b) { return std::pow(a, b); }, DType::kF32, DType::kF32,
                  {4, 5}, {4, 1}, {4, 5}, 0.5, 3);
  check_broadcast(OpId::FloorDiv, py_floordiv, DType::kF32, DType::kF32, {3, 4}, {4}, {3, 4});
  check_broadcast(OpId::Mod, py_mod, DType::kF32, DType::kF32, {3, 4}, {3, 4}, {3, 4});
  check_broadcast(OpId::Add, [](double a, double b) { return a + b; }, DType::kF16, DType::kF16, {2, 3},
                  {3}, {2, 3});
}

TEST(ElementwiseBinary, IntegerDivisionGivesF32) {
  KernelTester(OpId::Div)
      .in(HostTensor::of(DType::kI32, {4}, {7, -7, 1, 0}))
      .in(HostTensor::of(DType::kI32, {4}, {2, 2, 3, 0}))
      .out(DType::kF32, {4})
      .expect({3.5, -3.5, 1.0 / 3, std::nan("")});
  KernelTester(OpId::Div)
      .in(HostTensor::of(DType::kF32, {3}, {1, -1, 0}))
      .in(HostTensor::of(DType::kF32, {3}, {0, 0, 0}))
      .out(DType::kF32, {3})
      .expect({INFINITY, -INFINITY, std::nan("")});
}

TEST(ElementwiseBinary, FloorDivAndModFollowPython) {
  const std::vector<double> a = {7, -7, 7, -7, 6, -6, 0};
  const std::vector<double> b = {2, 2, -2, -2, 3, 3, -5};
  for (DType dt : {DType::kI32, DType::kI64, DType::kF32}) {
    KernelTester(OpId::FloorDiv).in(HostTensor::of(dt, {7}, a)).in(HostTensor::of(dt, {7}, b)).out(dt, {7})
        .expect({3, -4, -4, 3, 2, -2, 0});
    KernelTester(OpId::Mod).in(HostTensor::of(dt, {7}, a)).in(HostTensor::of(dt, {7}, b)).out(dt, {7})
        .expect({1, 1, -1, -1, 0, 0, 0});
  }
  // Float modulo takes the divisor's sign, also for fractions and -0.
  KernelTester(OpId::Mod)
      .in(HostTensor::of(DType::kF32, {3}, {-0.5, 5.5, 1}))
      .in(HostTensor::of(DType::kF32, {3}, {2, -2, 0}))
      .out(DType::kF32, {3})
      .expect({1.5, -0.5, std::nan("")});
  KernelTester t(OpId::Mod);
  t.in(HostTensor::of(DType::kF32, {1}, {4})).in(HostTensor::of(DType::kF32, {1}, {-2})).out(DType::kF32, {1});
  ASSERT_TRUE(t.run().ok());
  EXPECT_TRUE(std::signbit(t.output().at(0)));
}

TEST(ElementwiseBinary, IntegerDivisionByZeroIsAnError) {
  for (DType dt : {DType::kI32, DType::kI64}) {
    KernelTester(OpId::FloorDiv)
        .in(HostTensor::of(dt, {3}, {1, 2, 3}))
        .in(HostTensor::of(dt, {3}, {1, 0, 1}))
        .out(dt, {3})
        .expect_error(StatusCode::kRuntimeError, "floordiv: integer division by zero");
    KernelTester(OpId::Mod)
        .in(HostTensor::of(dt, {2, 2}, {1, 2, 3, 4}))
        .in(HostTensor::scalar(dt, 0))
        .out(dt, {2, 2})
        .expect_error(StatusCode::kRuntimeError, "mod: integer division by zero");
  }
  // Nothing is computed for an empty result, so nothing divides by zero.
  KernelTester(OpId::FloorDiv)
      .in(HostTensor(DType::kI32, {0}))
      .in(HostTensor::scalar(DType::kI32, 0))
      .out(DType::kI32, {0})
      .expect({});
}

TEST(ElementwiseBinary, IntegerOverflowWraps) {
  const double max32 = std::numeric_limits<int32_t>::max(), min32 = std::numeric_limits<int32_t>::min();
  KernelTester(OpId::Add)
      .in(HostTensor::of(DType::kI32, {2}, {max32, min32}))
      .in(HostTensor::of(DType::kI32, {2}, {1, -1}))
      .out(DType::kI32, {2})
      .expect({min32, max32});
  KernelTester(OpId::Mul)
      .in(HostTensor::of(DType::kI32, {1}, {65536}))
      .in(HostTensor::of(DType::kI32, {1}, {65537}))
      .out(DType::kI32, {1})
      .expect({65536});
  KernelTester(OpId::FloorDiv)
      .in(HostTensor::of(DType::kI32, {1}, {min32}))
      .in(HostTensor::of(DType::kI32, {1}, {-1}))
      .out(DType::kI32, {1})
      .expect({min32});
  HostTensor big(DType::kI64, {1});
  big.set_int(0, std::numeric_limits<int64_t>::max());
  KernelTester(OpId::Add)
      .in(big)
      .in(HostTensor::of(DType::kI64, {1}, {1}))
      .out(DType::kI64, {1})
      .expect_ints({std::numeric_limits<int64_t>::min()});
  KernelTester(OpId::Pow)
      .in(HostTensor::of(DType::kI32, {3}, {2, -3, 2}))
      .in(HostTensor::of(DType::kI32, {3}, {10, 3, 32}))
      .out(DType::kI32, {3})
      .expect({1024, -27, 0});
}

TEST(ElementwiseBinary, IntegerPowerWithNegativeExponentIsAnError) {
  KernelTester(OpId::Pow)
      .in(HostTensor::of(DType::kI64, {2}, {2, 2}))
      .in(HostTensor::of(DType::kI64, {2}, {1, -1}))
      .out(DType::kI64, {2})
      .expect_error(StatusCode::kRuntimeError, "pow: integers to negative integer powers are not allowed");
}

TEST(ElementwiseBinary, NaNPropagatesThroughMaximumAndFailsComparisons) {
  const double nan = std::nan("");
  auto a = HostTensor::of(DType::kF32, {3}, {nan, 1, 2});
  auto b = HostTensor::of(DType::kF32, {3}, {1, nan, 0});
  KernelTester(OpId::Maximum).in(a).in(b).out(DType::kF32, {3}).expect({nan, nan, 2});
  KernelTester(OpId::Minimum).in(a).in(b).out(DType::kF32, {3}).expect({nan, nan, 0});
  KernelTester(OpId::Less).in(a).in(b).out(DType::kBool, {3}).expect({0, 0, 0});
  KernelTester(OpId::NotEqual).in(a).in(b).out(DType::kBool, {3}).expect({1, 1, 1});
}

TEST(ElementwiseBinary, LogicalOpsOnBool) {
  auto a = HostTensor::of(DType::kBool, {4}, {0, 0, 1, 1});
  auto b = HostTensor::of(DType::kBool, {4}, {0, 1, 0, 1});
  KernelTester(OpId::LogicalAnd).in(a).in(b).out(DType::kBool, {4}).expect({0, 0, 0, 1});
  KernelTester(OpId::LogicalOr).in(a).in(b).out(DType::kBool, {4}).expect({0, 1, 1, 1});
  KernelTester(OpId::LogicalAnd)
      .in(a)
      .in(HostTensor::scalar(DType::kBool, 1))
      .out(DType::kBool, {4})
      .expect({0, 0, 1, 1});
  KernelTester(OpId::Equal).in(a).in(b).out(DType::kBool, {4}).expect({1, 0, 0, 1});
}

TEST(ElementwiseBinary, MismatchedShapesAreRejectedNotRead) {
  KernelTester(OpId::Add)
      .in(HostTensor(DType::kF32, {3}))
      .in(HostTensor(DType::kF32, {4}))
      .out(DType::kF32, {4})
      .expect_error(StatusCode::kInternal, "add: cannot broadcast f32[3] and f32[4] to f32[4]");
}

}  // namespace
}  // namespace sg::kernels::testing
