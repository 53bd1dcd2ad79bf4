// cumprod and searchsorted against naive float64 references: every dtype and axis,
// integer wrap-around, NaN ordered last, both sides, empty sequences and values.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/kernel_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;
using Shape = std::vector<int64_t>;
const DType kAllDTypes[] = {DType::kF32, DType::kF16, DType::kI32, DType::kI64, DType::kBool};

TEST(CumProd, EveryAxisAndDtype) {
  const Shape shape = {3, 4, 5};
  for (DType t : kAllDTypes)
    for (int axis = 0; axis < 3; ++axis) {
      SCOPED_TRACE(::testing::Message() << dtype_name(t) << " axis " << axis);
      const HostTensor x = HostTensor::random(t, shape, 11, -2, 2);
      const DType out = (t == DType::kBool || t == DType::kI32) ? DType::kI64 : t;
      int64_t outer = 1, inner = 1;
      for (int d = 0; d < axis; ++d) outer *= shape[size_t(d)];
      for (size_t d = size_t(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
      const int64_t n = shape[size_t(axis)];
      std::vector<double> want(size_t(x.numel()));
      for (int64_t a = 0; a < outer; ++a)
        for (int64_t b = 0; b < inner; ++b) {
          double acc = 1;
          for (int64_t i = 0; i < n; ++i) {
            const int64_t p = (a * n + i) * inner + b;
            want[size_t(p)] = acc *= x.at(p);
          }
        }
      KernelTester(OpId::CumProd).in(x).out(out, shape).attr_int(axis).expect(want, t == DType::kF16 ? 8e-3 : 1e-5, 1e-4);
    }
}

TEST(CumProd, IntegersWrapAndEmptyAxes) {
  HostTensor x(DType::kI64, {3});
  x.set_int(0, int64_t(1) << 40);
  x.set_int(1, int64_t(1) << 23);
  x.set_int(2, 2);
  // 2^63 wraps to the minimum, then * 2 to 0, as NumPy's int64 multiply.
  KernelTester(OpId::CumProd).in(x).out(DType::kI64, {3}).attr_int(0)
      .expect_ints({int64_t(1) << 40, std::numeric_limits<int64_t>::min(), 0});
  KernelTester(OpId::CumProd).in(HostTensor::of(DType::kI32, {2}, {65536, 65536})).out(DType::kI64, {2}).attr_int(0)
      .expect_ints({65536, int64_t(1) << 32});  // accumulates in i64, as NumPy's i32 -> i64
  KernelTester(OpId::CumProd).in(HostTensor(DType::kF32, {2, 0})).out(DType::kF32, {2, 0}).attr_int(1).expect({});
}

// NumPy's searchsorted by definition: the count of a's items before which v goes.
int64_t reference_position(const std::vector<double>& a, double v, bool right) {
  auto less = [](double p, double q) { return !std::isnan(p) && (std::isnan(q) || p < q); };
  int64_t i = 0;
  while (i < int64_t(a.size()) && (right ? !less(v, a[size_t(i)]) : less(a[size_t(i)], v))) ++i;
  return i;
}

TEST(SearchSorted, BothSidesEveryDtypeWithTiesAndNan) {
  for (DType t : kAllDTypes)
    for (int right = 0; right < 2; ++right) {
      SCOPED_TRACE(::testing::Message() << dtype_name(t) << (right ? " right" : " left"));
      HostTensor a = HostTensor::random(t, {9}, 3, -3, 3);
      std::vector<double> av;
      for (int64_t i = 0; i < a.numel(); ++i) av.push_back(is_float(t) ? std::round(a.at(i)) : a.at(i));
      if (is_float(t)) av.back() = NAN;
      std::sort(av.begin(), av.end(), [](double p, double q) { return !std::isnan(p) && (std::isnan(q) || p < q); });
      for (int64_t i = 0; i < a.numel(); ++i) a.set(i, av[size_t(i)]);
      HostTensor v = HostTensor::random(t, {3, 5}, 5, -4, 4);
      for (int64_t i = 0; i < v.numel(); ++i)
        if (is_float(t)) v.set(i, i == 7 ? NAN : std::round(v.at(i) * 2) / 2);
      std::vector<int64_t> want;
      for (int64_t i = 0; i < v.numel(); ++i) want.push_back(reference_position(av, v.at(i), right != 0));
      KernelTester(OpId::SearchSorted).in(a).in(v).out(DType::kI64, {3, 5}).attr_int(right).expect_ints(want);
    }
}

TEST(SearchSorted, EmptySequenceAndValues) {
  KernelTester(OpId::SearchSorted).in(HostTensor(DType::kF32, {0})).in(HostTensor::of(DType::kF32, {2}, {1, -1}))
      .out(DType::kI64, {2}).attr_int(0).expect_ints({0, 0});
  KernelTester(OpId::SearchSorted).in(HostTensor::of(DType::kI64, {2}, {1, 2})).in(HostTensor(DType::kI64, {0, 3}))
      .out(DType::kI64, {0, 3}).attr_int(1).expect_ints({});
}

}  // namespace
}  // namespace sg::kernels::testing
