// slice, slice_update and take. Expected values are NumPy's (a[b:e:s] on
// arange(7), and mixed index/range subscripts of arange(24).reshape(2, 3, 4)).
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

// slice(x, bounds...) or, with a value, slice_update(x, value, bounds...).
KernelTester slice_tester(HostTensor x, const std::vector<Axis>& axes, DType bound_dtype = DType::kI64,
                          std::optional<HostTensor> value = std::nullopt) {
  KernelTester t(value ? OpId::SliceUpdate : OpId::Slice);
  t.in(std::move(x));
  if (value) t.in(std::move(*value));
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
      .expect_error(StatusCode::kRuntimeError, "slice: index 5 is out of bounds for axis 0 with size 3");
  slice_tester(x, {{-4, {}, 1, true, true}}).out(DType::kF32, {})
      .expect_error(StatusCode::kRuntimeError, "slice: index -4 is out of bounds for axis 0 with size 3");
}

HostTensor value(DType t, std::vector<int64_t> shape, std::vector<double> v) {
  return HostTensor::of(t, std::move(shape), v);
}

TEST(SliceUpdate, AssignsIntoACopyLikeNumPy) {
  const HostTensor x = HostTensor::of(DType::kI64, {2, 3, 4}, arange(24));
  // y = x.copy(); y[1, ::-1, 1:4:2] = [[100, 101], [102, 103], [104, 105]]
  std::vector<double> want = arange(24);
  for (auto [pos, v] : std::vector<std::pair<int, double>>{{21, 100}, {23, 101}, {17, 102}, {19, 103}, {13, 104}, {15, 105}})
    want[size_t(pos)] = v;
  slice_tester(x, {{1, {}, 1, true}, {{}, {}, -1}, {1, 4, 2}}, DType::kI64,
               value(DType::kI64, {3, 2}, {100, 101, 102, 103, 104, 105}))
      .out(DType::kI64, {2, 3, 4}).expect(want);
  // y[:, -1, ::3] = [7, 9] (a row broadcast over the first axis), the index staged
  want = arange(24);
  for (auto [pos, v] : std::vector<std::pair<int, double>>{{8, 7}, {11, 9}, {20, 7}, {23, 9}}) want[size_t(pos)] = v;
  slice_tester(x, {{}, {-1, {}, 1, true, true}, {{}, {}, 3}}, DType::kI32, value(DType::kI64, {2}, {7, 9}))
      .out(DType::kI64, {2, 3, 4}).expect(want);
  // y[0, 2, 3] = -1, and y[0] = 5 (a scalar broadcast over a region)
  want = arange(24);
  want[11] = -1;
  slice_tester(x, {{0, {}, 1, true}, {2, {}, 1, true}, {-1, {}, 1, true}}, DType::kI64, value(DType::kI64, {}, {-1}))
      .out(DType::kI64, {2, 3, 4}).expect(want);
  want = arange(24);
  for (int i = 0; i < 12; ++i) want[size_t(i)] = 5;
  slice_tester(x, {{0, {}, 1, true}, {}, {}}, DType::kI64, value(DType::kI64, {1, 1, 1}, {5}))
      .out(DType::kI64, {2, 3, 4}).expect(want);
}

TEST(SliceUpdate, EmptyRegionsAndDtypes) {
  for (DType t : {DType::kF32, DType::kF16, DType::kI32, DType::kBool}) {
    slice_tester(HostTensor::of(t, {4}, {1, 0, 1, 0}), {{1, 3, 1}}, DType::kI64, value(t, {2}, {0, 1}))
        .out(t, {4}).expect({1, 0, 1, 0});
    slice_tester(HostTensor::of(t, {4}, {1, 0, 1, 0}), {{3, 1, 1}}, DType::kI64, value(t, {}, {1}))
        .out(t, {4}).expect({1, 0, 1, 0});  // x[3:1] is empty
  }
}

TEST(SliceUpdate, IndexOutOfRangeNamesTheOp) {
  const HostTensor x = HostTensor::of(DType::kF32, {3}, {1, 2, 3});
  slice_tester(x, {{5, {}, 1, true}}, DType::kI64, value(DType::kF32, {}, {0})).out(DType::kF32, {3})
      .expect_error(StatusCode::kRuntimeError, "slice_update: index 5 is out of bounds for axis 0 with size 3");
  slice_tester(x, {{-4, {}, 1, true, true}}, DType::kI32, value(DType::kF32, {}, {0})).out(DType::kF32, {3})
      .expect_error(StatusCode::kRuntimeError, "slice_update: index -4 is out of bounds for axis 0 with size 3");
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

TEST(ScatterAdd, AccumulatesRepeatedIndicesAlongAnyAxis) {
  // The gradient of take: rows gathered twice get both cotangents.
  const HostTensor x = HostTensor::of(DType::kF32, {3, 2}, arange(6));
  KernelTester(OpId::ScatterAdd).in(x).in(HostTensor::of(DType::kI64, {3}, {2, 0, 2}))
      .in(HostTensor::of(DType::kF32, {3, 2}, {1, 2, 3, 4, 5, 6})).out(DType::kF32, {3, 2})
      .attr_int(0).expect({3, 4, 0, 0, 6, 8});
  KernelTester(OpId::ScatterAdd).in(x).in(HostTensor::of(DType::kI32, {2, 2}, {-1, 0, 1, 1}))
      .in(HostTensor::of(DType::kF32, {3, 2, 2}, arange(12))).out(DType::kF32, {3, 2})
      .attr_int(1).expect({1, 0 + 2 + 3, 5, 4 + 6 + 7, 9, 8 + 10 + 11});
  KernelTester(OpId::ScatterAdd).in(HostTensor::of(DType::kI32, {2}, {0, 0})).in(HostTensor::of(DType::kI64, {1}, {0}))
      .in(HostTensor::of(DType::kI32, {1}, {1})).out(DType::kI32, {2}).attr_int(0)
      .expect_error(StatusCode::kUnsupported, "scatter_add: i32[2] (f32 is supported)");
  KernelTester(OpId::ScatterAdd).in(x).in(HostTensor::of(DType::kI64, {2}, {1, 3}))
      .in(HostTensor::of(DType::kF32, {2, 2}, arange(4))).out(DType::kF32, {3, 2}).attr_int(0)
      .expect_error(StatusCode::kRuntimeError, "take: index 3 is out of bounds for axis 0 with size 3");
}

}  // namespace
}  // namespace sg::kernels::testing
