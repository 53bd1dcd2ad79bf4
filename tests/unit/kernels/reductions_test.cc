// Reductions over axes lists (every combination for a 3-D input), keepdims,
// empty inputs, NaN handling and the result dtypes of SPEC §3.
#include <cmath>
#include <functional>
#include <limits>

#include "kernels/kernel_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;
using Shape = std::vector<int64_t>;
// Folds the reduced values of one output element.
using Fold = std::function<double(const std::vector<double>&)>;

// The float64 reference: groups input elements by their kept coordinates.
std::vector<double> reduce_reference(const HostTensor& x, const std::vector<int64_t>& axes, const Fold& fold,
                                     Shape& out_shape) {
  std::vector<bool> reduced(x.shape().size(), false);
  for (int64_t a : axes) reduced[size_t(a)] = true;
  out_shape.clear();
  for (size_t d = 0; d < x.shape().size(); ++d)
    if (!reduced[d]) out_shape.push_back(x.shape()[d]);
  std::vector<std::vector<double>> groups(size_t(numel_of(out_shape)));
  for (int64_t i = 0; i < x.numel(); ++i) {
    const auto idx = unravel(i, x.shape());
    int64_t o = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      if (!reduced[d]) o = o * x.shape()[d] + idx[d];
    groups[size_t(o)].push_back(x.at(i));
  }
  std::vector<double> want;
  for (const auto& g : groups) want.push_back(fold(g));
  return want;
}

double fold_sum(const std::vector<double>& v) { double s = 0; for (double x : v) s += x; return s; }
double fold_prod(const std::vector<double>& v) { double s = 1; for (double x : v) s *= x; return s; }
double fold_mean(const std::vector<double>& v) { return fold_sum(v) / double(v.size()); }
double fold_max(const std::vector<double>& v) { double m = -INFINITY; for (double x : v) m = std::max(m, x); return m; }
double fold_min(const std::vector<double>& v) { double m = INFINITY; for (double x : v) m = std::min(m, x); return m; }
double fold_any(const std::vector<double>& v) { for (double x : v) if (x != 0) return 1; return 0; }
double fold_all(const std::vector<double>& v) { for (double x : v) if (x == 0) return 0; return 1; }

void check_reduce(OpId op, const Fold& fold, DType in, DType out, const Shape& shape,
                  const std::vector<int64_t>& axes, bool keepdims, double lo = -3, double hi = 3) {
  SCOPED_TRACE(::testing::Message() << "op " << int(op) << " " << dtype_name(in) << " axes " << axes.size()
                                    << (axes.empty() ? -1 : axes[0]) << " keepdims " << keepdims);
  HostTensor x = HostTensor::random(in, shape, 21, lo, hi);
  Shape out_shape;
  const auto want = reduce_reference(x, axes, fold, out_shape);
  if (keepdims) {
    out_shape = shape;
    for (int64_t a : axes) out_shape[size_t(a)] = 1;
  }
  KernelTester(op).in(x).out(out, out_shape).attr_ints(axes).attr_int(keepdims).expect(want, out == DType::kF16 ? 2e-3 : 1e-5);
}

const std::vector<std::vector<int64_t>> kAllAxes3 = {{}, {0}, {1}, {2}, {0, 1}, {0, 2}, {1, 2}, {0, 1, 2}};

TEST(Reductions, EveryAxesListOnF32) {
  for (const auto& axes : kAllAxes3)
    for (bool keep : {false, true}) {
      const DType f = DType::kF32;
      check_reduce(OpId::Sum, fold_sum, f, f, {3, 4, 5}, axes, keep);
      check_reduce(OpId::Mean, fold_mean, f, f, {3, 4, 5}, axes, keep);
      check_reduce(OpId::Max, fold_max, f, f, {3, 4, 5}, axes, keep);
      check_reduce(OpId::Min, fold_min, f, f, {3, 4, 5}, axes, keep);
      check_reduce(OpId::Prod, fold_prod, f, f, {3, 4, 5}, axes, keep, 0.5, 1.5);
      check_reduce(OpId::Any, fold_any, DType::kBool, DType::kBool, {3, 4, 5}, axes, keep);
      check_reduce(OpId::All, fold_all, f, DType::kBool, {3, 4, 5}, axes, keep, -1, 1);
    }
}

TEST(Reductions, ColumnsWiderThanOneAccumulatorBlock) {
  for (bool keep : {false, true}) {
    check_reduce(OpId::Sum, fold_sum, DType::kF32, DType::kF32, {3, 300}, {0}, keep);
    check_reduce(OpId::Max, fold_max, DType::kF32, DType::kF32, {2, 5, 260}, {1}, keep);
    check_reduce(OpId::Mean, fold_mean, DType::kF16, DType::kF16, {4, 270}, {0}, keep);
  }
}

TEST(Reductions, IntegerDtypes) {
  for (const auto& axes : kAllAxes3) {
    check_reduce(OpId::Sum, fold_sum, DType::kI32, DType::kI64, {2, 3, 4}, axes, false, -9, 9);
    check_reduce(OpId::Sum, fold_sum, DType::kBool, DType::kI64, {2, 3, 4}, axes, false);
    check_reduce(OpId::Sum, fold_sum, DType::kI64, DType::kI64, {2, 3, 4}, axes, false, -9, 9);
    check_reduce(OpId::Prod, fold_prod, DType::kI32, DType::kI64, {2, 3, 4}, axes, true, -3, 3);
    check_reduce(OpId::Mean, fold_mean, DType::kI64, DType::kF32, {2, 3, 4}, axes, false, -9, 9);
    check_reduce(OpId::Max, fold_max, DType::kI32, DType::kI32, {2, 3, 4}, axes, false, -9, 9);
    check_reduce(OpId::Min, fold_min, DType::kI64, DType::kI64, {2, 3, 4}, axes, true, -9, 9);
    check_reduce(OpId::All, fold_all, DType::kI32, DType::kBool, {2, 3, 4}, axes, false, 0, 5);
  }
  // i32 values whose sum overflows i32 but not the i64 result.
  const double big = 2e9;
  KernelTester(OpId::Sum)
      .in(HostTensor::of(DType::kI32, {3}, {big, big, big}))
      .out(DType::kI64, {})
      .attr_ints({0})
      .attr_int(0)
      .expect_ints({6000000000});
  KernelTester(OpId::Sum)
      .in(HostTensor::of(DType::kF16, {4}, {0.5, 0.25, 1024, 1}))
      .out(DType::kF16, {})
      .attr_ints({0})
      .attr_int(0)
      .expect({1025.75}, 1e-3);
}

TEST(Reductions, EmptyInputs) {
  const std::vector<std::pair<OpId, double>> identities = {
      {OpId::Sum, 0}, {OpId::Prod, 1}, {OpId::Mean, std::nan("")}};
  for (const auto& [op, value] : identities)
    KernelTester(op).in(HostTensor(DType::kF32, {2, 0})).out(DType::kF32, {2}).attr_ints({1}).attr_int(0)
        .expect({value, value});
  KernelTester(OpId::Any).in(HostTensor(DType::kBool, {0})).out(DType::kBool, {}).attr_ints({0}).attr_int(0)
      .expect({0});
  KernelTester(OpId::All).in(HostTensor(DType::kBool, {0})).out(DType::kBool, {}).attr_ints({0}).attr_int(0)
      .expect({1});
  KernelTester(OpId::Max).in(HostTensor(DType::kF32, {0, 3})).out(DType::kF32, {3}).attr_ints({0}).attr_int(0)
      .expect_error(StatusCode::kRuntimeError, "zero-size array to reduction operation max which has no identity");
  // Reducing the non-empty axis of an empty tensor gives an empty result, no error.
  KernelTester(OpId::Max).in(HostTensor(DType::kF32, {0, 3})).out(DType::kF32, {0}).attr_ints({1}).attr_int(0)
      .expect({});
}

TEST(Reductions, MaxAndMinPropagateNaN) {
  const double nan = std::nan("");
  auto x = HostTensor::of(DType::kF32, {2, 3}, {1, nan, 3, 4, 5, 6});
  KernelTester(OpId::Max).in(x).out(DType::kF32, {2}).attr_ints({1}).attr_int(0).expect({nan, 6});
  KernelTester(OpId::Min).in(x).out(DType::kF32, {3}).attr_ints({0}).attr_int(0).expect({1, nan, 3});
}

// argmax/argmin reference: first index of the extreme, the first NaN winning.
std::vector<double> arg_reference(const HostTensor& x, int axis, bool is_max) {
  Shape shape = x.shape();
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[size_t(d)];
  for (size_t d = size_t(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t n = shape[size_t(axis)];
  std::vector<double> want;
  for (int64_t a = 0; a < outer; ++a)
    for (int64_t b = 0; b < inner; ++b) {
      int64_t best = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double v = x.at((a * n + i) * inner + b), bv = x.at((a * n + best) * inner + b);
        if (std::isnan(bv)) break;
        if (std::isnan(v) || (is_max ? v > bv : v < bv)) best = i;
      }
      want.push_back(double(best));
    }
  return want;
}

TEST(Reductions, ArgMaxArgMinEveryAxis) {
  for (DType dt : {DType::kF32, DType::kI32, DType::kF16})
    for (int axis = 0; axis < 3; ++axis)
      for (bool is_max : {true, false}) {
        // Few distinct values, so ties are common and first-occurrence matters.
        HostTensor x = HostTensor::random(dt, {3, 4, 5}, 7, -2, 2);
        if (is_float(dt))
          for (int64_t i = 0; i < x.numel(); ++i) x.set(i, std::round(x.at(i)));
        Shape out = {3, 4, 5};
        out.erase(out.begin() + axis);
        KernelTester(is_max ? OpId::ArgMax : OpId::ArgMin).in(x).out(DType::kI64, out).attr_int(axis).attr_int(0)
            .expect(arg_reference(x, axis, is_max));
      }
}

TEST(Reductions, ArgMaxFindsFirstNaN) {
  const double nan = std::nan("");
  auto x = HostTensor::of(DType::kF32, {2, 4}, {1, nan, 9, nan, 5, 7, 7, 2});
  KernelTester(OpId::ArgMax).in(x).out(DType::kI64, {2, 1}).attr_int(1).attr_int(1).expect_ints({1, 1});
  KernelTester(OpId::ArgMin).in(x).out(DType::kI64, {2}).attr_int(1).attr_int(0).expect_ints({1, 3});
  KernelTester(OpId::ArgMax).in(HostTensor(DType::kF32, {2, 0})).out(DType::kI64, {2}).attr_int(1).attr_int(0)
      .expect_error(StatusCode::kRuntimeError, "attempt to get argmax of an empty sequence");
}

}  // namespace
}  // namespace sg::kernels::testing
