// slice and take. Expected values are NumPy's (a[b:e:s] on arange(7), and
// mixed index/range subscripts of arange(24).reshape(2, 3, 4)).
#include <optional>

#include "kernels/kernel_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;
using namespace ops::attr;
using Opt = std::optional<int64_t>;

std::vector<double> arange(int64_t n) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(double(i));
  return v;
}

// One axis of a subscript: a range with optional bounds, or an integer index.
struct Axis {
  Opt begin, end;
  int64_t step = 1;
  bool index = false;
  bool dynamic = false;  // bounds given as scalar inputs instead of attributes
};

KernelTester slice_tester(HostTensor x, const std::vector<Axis>& axes, DType bound_dtype = DType::kI64) {
  KernelTester t(OpId::Slice);
  t.in(std::move(x));
  std::vector<int64_t> begins, ends, steps, flags;
  for (const Axis& a : axes) {
    int64_t f = a.index ? int64_t(kIndex) : 0;
    begins.push_back(a.begin && !a.dynamic ? *a.begin : 0);
    ends.push_back(a.end && !a.dynamic ? *a.end : 0);
    steps.push_back(a.step);
    if (a.begin) f |= a.dynamic ? kDynBegin : kHasBegin;
    if (a.end) f |= a.dynamic ? kDynEnd : kHasEnd;
    if (a.dynamic && a.begin) t.in(HostTensor::scalar(bound_dtype, double(*a.begin)));
    if (a.dynamic && a.end) t.in(HostTensor::scalar(bound_dtype, double(*a.end)));
    flags.push_back(f);
  }
  t.attr_ints(begins).attr_ints(ends).attr_ints(steps).attr_ints(flags);
  return t;
}

TEST(Slice, RangesClampLikeNumPy) {
  struct Case {
    Opt b, e;
    int64_t s;
    std::vector<double> want;
  };
  const std::vector<Case> cases = {
      {{}, {}, 1, {0, 1, 2, 3, 4, 5, 6}}, {2, 5, 1, {2, 3, 4}},        {-3, {}, 1, {4, 5, 6}},
      {{}, -2, 1, {0, 1, 2, 3, 4}},       {-100, 100, 1, arange(7)},   {5, 2, 1, {}},
      {{}, {}, -1, {6, 5, 4, 3, 2, 1, 0}}, {5, 1, -2, {5, 3}},          {-1, -8, -1, {6, 5, 4, 3, 2, 1, 0}},
      {100, -100, -3, {6, 3, 0}},         {{}, {}, 3, {0, 3, 6}},      {1, {}, -1, {1, 0}},
      {6, {}, 2, {6}},                    {-2, -1, 1, {5}},
  };
  for (bool dynamic : {false, true})
    for (DType dt : {DType::kF32, DType::kI32})
      for (const Case& c : cases) {
        SCOPED_TRACE(::testing::Message() << c.b.value_or(999) << ":" << c.e.value_or(999) << ":" << c.s
                                          << (dynamic ? " dynamic" : ""));
        Axis a{c.b, c.e, c.s, false, dynamic};
        slice_tester(HostTensor::of(dt, {7}, arange(7)), {a}, dynamic ? DType::kI32 : DType::kI64)
            .out(dt, {int64_t(c.want.size())})
            .expect(c.want);
      }
}

TEST(Slice, IndicesDropAxes) {
  const HostTensor x = HostTensor::of(DType::kI64, {2, 3, 4}, arange(24));
  // x[1, ::-1, 1:4:2]
  slice_tester(x, {{1, {}, 1, true}, {{}, {}, -1}, {1, 4, 2}}).out(DType::kI64, {3, 2})
      .expect({21, 23, 17, 19, 13, 15});
  // x[:, -1, ::3] with the index staged
  slice_tester(x, {{}, {-1, {}, 1, true, true}, {{}, {}, 3}}).out(DType::kI64, {2, 2}).expect({8, 11, 20, 23});
  // x[0, 2, 3]: a 0-d result
  slice_tester(x, {{0, {}, 1, true}, {2, {}, 1, true}, {-1, {}, 1, true}}).out(DType::kI64, {}).expect({11});
}

TEST(Slice, IndexOutOfRangeIsAnError) {
  const HostTensor x = HostTensor::of(DType::kF32, {3}, {1, 2, 3});
  slice_tester(x, {{5, {}, 1, true}}).out(DType::kF32, {})
      .expect_error(StatusCode::kRuntimeError, "index 5 is out of bounds for axis 0 with size 3");
  slice_tester(x, {{-4, {}, 1, true, true}}).out(DType::kF32, {})
      .expect_error(StatusCode::kRuntimeError, "index -4 is out of bounds for axis 0 with size 3");
}

TEST(Take, GathersAlongAnyAxis) {
  const HostTensor x = HostTensor::of(DType::kF32, {2, 3, 2}, arange(12));
  KernelTester(OpId::Take).in(x).in(HostTensor::of(DType::kI64, {2}, {1, 0})).out(DType::kF32, {2, 3, 2})
      .attr_int(0).expect({6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5});
  KernelTester(OpId::Take).in(x).in(HostTensor::of(DType::kI32, {2, 2}, {-1, 0, 2, 2})).out(DType::kF32, {2, 2, 2, 2})
      .attr_int(1).expect({4, 5, 0, 1, 4, 5, 4, 5, 10, 11, 6, 7, 10, 11, 10, 11});
  KernelTester(OpId::Take).in(x).in(HostTensor::scalar(DType::kI64, 1)).out(DType::kF32, {2, 3})
      .attr_int(2).expect({1, 3, 5, 7, 9, 11});
  KernelTester(OpId::Take).in(x).in(HostTensor(DType::kI64, {0})).out(DType::kF32, {2, 0, 2}).attr_int(1).expect({});
}

TEST(Take, IndexOutOfRangeIsAnError) {
  const HostTensor x = HostTensor::of(DType::kI32, {5}, arange(5));
  KernelTester(OpId::Take).in(x).in(HostTensor::of(DType::kI64, {2}, {1, 7})).out(DType::kI32, {2}).attr_int(0)
      .expect_error(StatusCode::kRuntimeError, "take: index 7 is out of bounds for axis 0 with size 5");
  KernelTester(OpId::Take).in(x).in(HostTensor::of(DType::kI32, {1}, {-6})).out(DType::kI32, {1}).attr_int(0)
      .expect_error(StatusCode::kRuntimeError, "take: index -6 is out of bounds for axis 0 with size 5");
}

}  // namespace
}  // namespace sg::kernels::testing
