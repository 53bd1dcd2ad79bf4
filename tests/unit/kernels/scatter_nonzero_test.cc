// scatter (x[idx] = v: the last of repeated indices wins) and flat_nonzero (the
// positions of nonzero elements, whose count reported_dims gives before the
// output is sized). Expected values are NumPy's.
#include <cmath>
#include <limits>

#include "kernels/kernel_tester.h"
#include "ops/infer.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;

std::vector<double> arange(int64_t n) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(double(i));
  return v;
}

TEST(Scatter, OverwritesRowsTheLastRepeatedIndexWinning) {
  // a = arange(6).reshape(3, 2); a[[2, 0, 2]] = [[1, 2], [3, 4], [5, 6]] -> [[3, 4], [2, 3], [5, 6]]
  const HostTensor x = HostTensor::of(DType::kF32, {3, 2}, arange(6));
  KernelTester(OpId::Scatter).in(x).in(HostTensor::of(DType::kI64, {3}, {2, 0, 2}))
      .in(HostTensor::of(DType::kF32, {3, 2}, {1, 2, 3, 4, 5, 6})).out(DType::kF32, {3, 2})
      .attr_int(0).expect({3, 4, 2, 3, 5, 6});
  // Along axis 1 with negative i32 indices of rank 2: a[:, [[-1, 0]]] = u (u [3, 1, 2]).
  KernelTester(OpId::Scatter).in(x).in(HostTensor::of(DType::kI32, {1, 2}, {-1, 0}))
      .in(HostTensor::of(DType::kF32, {3, 1, 2}, {10, 11, 12, 13, 14, 15})).out(DType::kF32, {3, 2})
      .attr_int(1).expect({11, 10, 13, 12, 15, 14});
}

TEST(Scatter, KeepsEveryDtypeAndChecksIndicesBeforeWriting) {
  KernelTester(OpId::Scatter).in(HostTensor::of(DType::kBool, {4}, {0, 0, 0, 0}))
      .in(HostTensor::of(DType::kI64, {2}, {1, -1})).in(HostTensor::of(DType::kBool, {2}, {1, 1}))
      .out(DType::kBool, {4}).attr_int(0).expect_ints({0, 1, 0, 1});
  KernelTester(OpId::Scatter).in(HostTensor::of(DType::kI64, {2}, {7, 8})).in(HostTensor::of(DType::kI64, {0}, {}))
      .in(HostTensor::of(DType::kI64, {0}, {})).out(DType::kI64, {2}).attr_int(0).expect_ints({7, 8});
  KernelTester(OpId::Scatter).in(HostTensor::of(DType::kF32, {3}, arange(3)))
      .in(HostTensor::of(DType::kI64, {2}, {0, 3})).in(HostTensor::of(DType::kF32, {2}, {1, 1}))
      .out(DType::kF32, {3}).attr_int(0)
      .expect_error(StatusCode::kRuntimeError, "scatter: index 3 is out of bounds for axis 0 with size 3");
}

std::vector<int64_t> reported(const HostTensor& x) {
  HostTensor copy = x;
  const TensorRef ref = copy.ref();
  std::vector<int64_t> dims;
  const Status s = reported_dims(OpId::FlatNonzero, {}, std::span<const TensorRef>(&ref, 1), dims);
  EXPECT_TRUE(s.ok()) << s.message();
  return dims;
}

TEST(FlatNonzero, ReportsTheCountThenWritesThePositions) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // -0.0 is zero, NaN is not (NumPy's truth values).
  const HostTensor f = HostTensor::of(DType::kF32, {2, 3}, {0, 1.5, -0.0, nan, 0, -2});
  EXPECT_EQ(reported(f), std::vector<int64_t>{3});
  KernelTester(OpId::FlatNonzero).in(f).out(DType::kI64, {3}).expect_ints({1, 3, 5});
  const HostTensor b = HostTensor::of(DType::kBool, {5}, {1, 0, 0, 1, 1});
  EXPECT_EQ(reported(b), std::vector<int64_t>{3});
  KernelTester(OpId::FlatNonzero).in(b).out(DType::kI64, {3}).expect_ints({0, 3, 4});
  const HostTensor none = HostTensor::of(DType::kI32, {2, 2}, {0, 0, 0, 0});
  EXPECT_EQ(reported(none), std::vector<int64_t>{0});
  KernelTester(OpId::FlatNonzero).in(none).out(DType::kI64, {0}).expect_ints({});
  // An output not sized by the count is the caller's bug, never a write past it.
  KernelTester(OpId::FlatNonzero).in(b).out(DType::kI64, {2})
      .expect_error(StatusCode::kInternal, "flat_nonzero: bool[5] has more nonzero elements than i64[2]");
}

TEST(FlatNonzero, ShapeRuleNeedsTheReportedCount) {
  const std::vector<ops::TensorType<int64_t>> in = {{DType::kF32, {2, 3}}};
  const std::vector<std::optional<int64_t>> scalars(1);
  std::vector<ops::TensorType<int64_t>> out;
  ops::ConcreteInferContext ctx;
  // Before the kernel counted (the memory planner): no shape, left to the run.
  EXPECT_FALSE(ops::infer<int64_t>(OpId::FlatNonzero, {}, in, scalars, out, ctx).ok());
  const int64_t count[] = {4};
  ctx.reported = count;
  ASSERT_TRUE(ops::infer<int64_t>(OpId::FlatNonzero, {}, in, scalars, out, ctx).ok());
  EXPECT_EQ(out[0].dtype, DType::kI64);
  EXPECT_EQ(out[0].shape, std::vector<int64_t>{4});
}

}  // namespace
}  // namespace sg::kernels::testing
