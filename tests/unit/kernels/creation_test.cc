// eye, arange and one_hot. Expected values are NumPy's.
#include <cmath>
#include <limits>

#include "kernels/kernel_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;

KernelTester eye(int64_t n, int64_t m, int64_t k, DType t) {
  KernelTester e(OpId::Eye);
  e.out(t, {n, m}).attr_int(n).attr_int(m).attr_int(k).attr_int(int64_t(t));
  return e;
}

TEST(Eye, DiagonalsLikeNumPy) {
  eye(3, 3, 0, DType::kF32).expect({1, 0, 0, 0, 1, 0, 0, 0, 1});
  eye(2, 4, 1, DType::kI32).expect({0, 1, 0, 0, 0, 0, 1, 0});   // np.eye(2, 4, 1)
  eye(4, 2, -1, DType::kI64).expect({0, 0, 1, 0, 0, 1, 0, 0});  // np.eye(4, 2, -1)
  eye(3, 2, -2, DType::kBool).expect({0, 0, 0, 0, 1, 0});
  eye(2, 2, 5, DType::kF16).expect({0, 0, 0, 0});
  eye(2, 2, std::numeric_limits<int64_t>::min(), DType::kF32).expect({0, 0, 0, 0});
  eye(0, 3, 0, DType::kF32).expect({});
}

template <class T>
HostTensor scalar(DType t, T v) {
  HostTensor s(t, {});
  s.set_int(0, int64_t(v));
  return s;
}

TEST(Arange, Integers) {
  // np.arange(2, 12, 3), np.arange(5, 0, -2)
  KernelTester(OpId::Arange).in(scalar(DType::kI64, 2)).in(scalar(DType::kI64, 12)).in(scalar(DType::kI64, 3))
      .out(DType::kI64, {4}).expect_ints({2, 5, 8, 11});
  KernelTester(OpId::Arange).in(scalar(DType::kI32, 5)).in(scalar(DType::kI32, 0)).in(scalar(DType::kI32, -2))
      .out(DType::kI32, {3}).expect_ints({5, 3, 1});
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  KernelTester(OpId::Arange).in(scalar(DType::kI64, lo)).in(scalar(DType::kI64, hi)).in(scalar(DType::kI64, hi))
      .out(DType::kI64, {3}).expect_ints({lo, -1, hi - 1});
  KernelTester(OpId::Arange).in(scalar(DType::kI64, 0)).in(scalar(DType::kI64, 0)).in(scalar(DType::kI64, 0))
      .out(DType::kI64, {0}).expect_error(StatusCode::kRuntimeError, "arange: step cannot be zero");
}

TEST(Arange, FloatsTakeTheirLength) {
  // np.arange(0.0, 1.0, 0.1) has 10 elements; the compiler gives the length.
  std::vector<double> want;
  for (int i = 0; i < 10; ++i) want.push_back(0.1 * i);
  KernelTester(OpId::Arange).in(HostTensor::scalar(DType::kF32, 0)).in(HostTensor::scalar(DType::kF32, 1))
      .in(HostTensor::scalar(DType::kF32, 0.1)).in(scalar(DType::kI64, 10)).out(DType::kF32, {10}).expect(want, 1e-6, 1e-7);
  KernelTester(OpId::Arange).in(HostTensor::scalar(DType::kF16, 1)).in(HostTensor::scalar(DType::kF16, -1))
      .in(HostTensor::scalar(DType::kF16, -0.5)).in(scalar(DType::kI32, 4)).out(DType::kF16, {4}).expect({1, 0.5, 0, -0.5});
  KernelTester(OpId::Arange).in(HostTensor::scalar(DType::kF32, 1)).in(HostTensor::scalar(DType::kF32, 2))
      .in(HostTensor::scalar(DType::kF32, 0)).in(scalar(DType::kI64, 0)).out(DType::kF32, {0})
      .expect_error(StatusCode::kRuntimeError, "arange: step cannot be zero");
}

TEST(OneHot, OutOfRangeIndicesGiveZeroRows) {
  // np.eye(3)[...] with -1 and 3 giving zero rows.
  KernelTester(OpId::OneHot).in(HostTensor::of(DType::kI64, {2, 2}, {0, 2, -1, 3})).out(DType::kF32, {2, 2, 3})
      .attr_int(3).attr_int(int64_t(DType::kF32)).expect({1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0});
  KernelTester(OpId::OneHot).in(HostTensor::scalar(DType::kI32, 1)).out(DType::kBool, {2}).attr_int(2)
      .attr_int(int64_t(DType::kBool)).expect({0, 1});
  for (DType t : {DType::kF16, DType::kI32, DType::kI64})
    KernelTester(OpId::OneHot).in(HostTensor::of(DType::kI32, {3}, {2, 0, 1})).out(t, {3, 3}).attr_int(3)
        .attr_int(int64_t(t)).expect({0, 0, 1, 1, 0, 0, 0, 1, 0});
  KernelTester(OpId::OneHot).in(HostTensor::of(DType::kI64, {2}, {0, 1})).out(DType::kF32, {2, 0}).attr_int(0)
      .attr_int(int64_t(DType::kF32)).expect({});
}

}  // namespace
}  // namespace sg::kernels::testing
