// cumsum, sort, argsort and topk against naive float64 references: every dtype,
// every axis, NaN ordering (last for sort, largest for topk) and ties by position.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernels/kernel_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;
using Shape = std::vector<int64_t>;
const DType kAllDTypes[] = {DType::kF32, DType::kF16, DType::kI32, DType::kI64, DType::kBool};

// Calls f(lane positions) for every lane of `shape` along `axis`: flat indices of
// the lane's elements in order.
template <class F>
void for_each_lane(const Shape& shape, int axis, F&& f) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[size_t(d)];
  for (size_t d = size_t(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t n = shape[size_t(axis)];
  for (int64_t a = 0; a < outer; ++a)
    for (int64_t b = 0; b < inner; ++b) {
      std::vector<int64_t> lane;
      for (int64_t i = 0; i < n; ++i) lane.push_back((a * n + i) * inner + b);
      f(lane, a, b, inner);
    }
}

// Random values with repeats (ties) and, for floats, a few NaNs.
HostTensor tie_heavy(DType t, Shape shape, uint32_t seed) {
  HostTensor x = HostTensor::random(t, std::move(shape), seed, -3, 3);
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (is_float(t)) x.set(i, std::round(x.at(i) * 2) / 2);
    if (is_float(t) && i % 7 == 3) x.set(i, NAN);
  }
  return x;
}

bool nan_last_less(double a, double b) { return !std::isnan(a) && (std::isnan(b) || a < b); }

TEST(CumSum, EveryAxisAndDtype) {
  const Shape shape = {3, 4, 5};
  for (DType t : kAllDTypes)
    for (int axis = 0; axis < 3; ++axis) {
      SCOPED_TRACE(::testing::Message() << dtype_name(t) << " axis " << axis);
      const HostTensor x = HostTensor::random(t, shape, 7);
      const DType out = (t == DType::kBool || t == DType::kI32) ? DType::kI64 : t;
      std::vector<double> want(size_t(x.numel()));
      for_each_lane(shape, axis, [&](const std::vector<int64_t>& lane, int64_t, int64_t, int64_t) {
        double acc = 0;
        for (int64_t p : lane) want[size_t(p)] = acc += x.at(p);
      });
      KernelTester(OpId::CumSum).in(x).out(out, shape).attr_int(axis).expect(want, t == DType::kF16 ? 4e-3 : 1e-6, 1e-3);
    }
}

TEST(CumSum, IntegersWrapAndEmptyAxes) {
  const int64_t big = std::numeric_limits<int64_t>::max();
  HostTensor x(DType::kI64, {2});
  x.set_int(0, big);
  x.set_int(1, 1);
  KernelTester(OpId::CumSum).in(x).out(DType::kI64, {2}).attr_int(0).expect_ints({big, std::numeric_limits<int64_t>::min()});
  KernelTester(OpId::CumSum).in(HostTensor::of(DType::kI32, {2}, {2147483647, 1})).out(DType::kI64, {2}).attr_int(0)
      .expect_ints({2147483647, 2147483648});  // accumulates in i64, as NumPy's i32 -> i64
  KernelTester(OpId::CumSum).in(HostTensor(DType::kF32, {2, 0})).out(DType::kF32, {2, 0}).attr_int(1).expect({});
}

// The stable ascending order of a lane, NaN last.
std::vector<int64_t> stable_order(const HostTensor& x, const std::vector<int64_t>& lane) {
  std::vector<int64_t> order(lane.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t i, int64_t j) { return nan_last_less(x.at(lane[size_t(i)]), x.at(lane[size_t(j)])); });
  return order;
}

TEST(Sort, StableWithNaNLast) {
  const Shape shape = {4, 9, 3};
  for (DType t : kAllDTypes)
    for (int axis = 0; axis < 3; ++axis) {
      SCOPED_TRACE(::testing::Message() << dtype_name(t) << " axis " << axis);
      const HostTensor x = tie_heavy(t, shape, 11);
      std::vector<double> values(size_t(x.numel()));
      std::vector<int64_t> positions(size_t(x.numel()));
      for_each_lane(shape, axis, [&](const std::vector<int64_t>& lane, int64_t, int64_t, int64_t) {
        const std::vector<int64_t> order = stable_order(x, lane);
        for (size_t i = 0; i < lane.size(); ++i) {
          values[size_t(lane[i])] = x.at(lane[size_t(order[i])]);
          positions[size_t(lane[i])] = order[i];
        }
      });
      KernelTester(OpId::Sort).in(x).out(t, shape).attr_int(axis).expect(values, 0);
      KernelTester(OpId::ArgSort).in(x).out(DType::kI64, shape).attr_int(axis).expect_ints(positions);
    }
}

TEST(Sort, SmallCasesLikeNumPy) {
  const HostTensor x = HostTensor::of(DType::kF32, {6}, {3, NAN, -1, 3, -INFINITY, 0});
  KernelTester(OpId::Sort).in(x).out(DType::kF32, {6}).attr_int(0).expect({-INFINITY, -1, 0, 3, 3, NAN});
  KernelTester(OpId::ArgSort).in(x).out(DType::kI64, {6}).attr_int(0).expect_ints({4, 2, 5, 0, 3, 1});
  KernelTester(OpId::ArgSort).in(HostTensor(DType::kI32, {0})).out(DType::kI64, {0}).attr_int(0).expect_ints({});
}

TEST(TopK, LargestFirstTiesByPositionNaNLargest) {
  const Shape shape = {3, 8, 2};
  for (DType t : kAllDTypes)
    for (int axis = 0; axis < 3; ++axis)
      for (int64_t k : {int64_t(0), int64_t(1), shape[size_t(axis)]}) {
        SCOPED_TRACE(::testing::Message() << dtype_name(t) << " axis " << axis << " k " << k);
        const HostTensor x = tie_heavy(t, shape, 13);
        Shape out_shape = shape;
        out_shape[size_t(axis)] = k;
        std::vector<double> values(size_t(numel_of(out_shape)));
        std::vector<int64_t> positions(values.size());
        for_each_lane(shape, axis, [&](const std::vector<int64_t>& lane, int64_t a, int64_t b, int64_t inner) {
          std::vector<int64_t> order(lane.size());
          std::iota(order.begin(), order.end(), 0);
          std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) {
            return nan_last_less(x.at(lane[size_t(j)]), x.at(lane[size_t(i)]));
          });
          for (int64_t i = 0; i < k; ++i) {
            const size_t o = size_t((a * k + i) * inner + b);
            values[o] = x.at(lane[size_t(order[size_t(i)])]);
            positions[o] = order[size_t(i)];
          }
        });
        KernelTester tk(OpId::TopK);
        tk.in(x).out(t, out_shape).also_out(DType::kI64, out_shape).attr_int(k).attr_int(axis).expect(values, 0);
        for (size_t i = 0; i < positions.size(); ++i)
          EXPECT_EQ(tk.extra_output(0).at_int(int64_t(i)), positions[i]) << "index " << i;
      }
}

TEST(TopK, SmallCase) {
  KernelTester tk(OpId::TopK);
  tk.in(HostTensor::of(DType::kF32, {6}, {1, NAN, 5, 5, -2, NAN}))
      .out(DType::kF32, {4})
      .also_out(DType::kI64, {4})
      .attr_int(4)
      .attr_int(0)
      .expect({NAN, NAN, 5, 5});
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(tk.extra_output(0).at_int(i), (std::vector<int64_t>{1, 5, 2, 3})[size_t(i)]);
}

TEST(TopK, KLargerThanTheAxisIsAnError) {
  KernelTester(OpId::TopK).in(HostTensor::of(DType::kI32, {2, 3}, {1, 2, 3, 4, 5, 6}))
      .out(DType::kI32, {2, 4}).also_out(DType::kI64, {2, 4}).attr_int(4).attr_int(1)
      .expect_error(StatusCode::kRuntimeError, "topk: k = 4 is larger than the size 3 of axis 1 of i32[2, 3]");
}

TEST(Ordering, ScratchIsOneIndexPerElementOfTheAxis) {
  HostTensor x(DType::kF32, {3, 7});
  const TensorRef in[] = {x.ref()};
  const ops::Attrs axis1{{ops::AttrValue::Int(1)}};
  EXPECT_EQ(reference_scratch_size(OpId::Sort, axis1, in), 7 * sizeof(int64_t));
  EXPECT_EQ(reference_scratch_size(OpId::ArgSort, ops::Attrs{{ops::AttrValue::Int(0)}}, in), 3 * sizeof(int64_t));
  EXPECT_EQ(reference_scratch_size(OpId::TopK, ops::Attrs{{ops::AttrValue::Int(2), ops::AttrValue::Int(1)}}, in),
            7 * sizeof(int64_t));
  EXPECT_EQ(reference_scratch_size(OpId::CumSum, axis1, in), 0u);
  EXPECT_EQ(reference_scratch_size(OpId::Sort, ops::Attrs{{ops::AttrValue::Int(5)}}, in), 0u);  // malformed
  // Without the scratch it asked for, a kernel fails instead of writing anywhere.
  HostTensor o(DType::kF32, {3, 7});
  TensorRef out[] = {o.ref()};
  EXPECT_EQ(reference_kernel(OpId::Sort)(KernelContext{}, axis1, std::span<const TensorRef>(in), std::span<TensorRef>(out)).code(),
            StatusCode::kInternal);
}

}  // namespace
}  // namespace sg::kernels::testing
