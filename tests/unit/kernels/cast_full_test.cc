// cast between every pair of dtypes, full, shape_dim, and the op -> kernel table.
#include <cmath>
#include <limits>

#include "kernels/kernel_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;

// NumPy's astype for in-range values: truncation toward zero, != 0 for bool.
double cast_reference(double v, DType to) {
  switch (to) {
    case DType::kF32: return double(float(v));
    case DType::kF16: return half_to_float(float_to_half(float(v)));
    case DType::kI32:
    case DType::kI64: return std::isnan(v) ? 0 : std::trunc(v);
    case DType::kBool: return v != 0;
  }
  return 0;
}

TEST(Cast, EveryPairOfDtypes) {
  const std::vector<double> values = {0, 1, -1, 2.75, -2.75, 100, -0.5, 65504};
  for (int from = 0; from < kNumDTypes; ++from)
    for (int to = 0; to < kNumDTypes; ++to) {
      SCOPED_TRACE(::testing::Message() << dtype_name(DType(from)) << " -> " << dtype_name(DType(to)));
      const HostTensor x = HostTensor::of(DType(from), {8}, values);
      std::vector<double> want;
      for (double v : x.values()) want.push_back(cast_reference(v, DType(to)));
      KernelTester(OpId::Cast).in(x).out(DType(to), {2, 4}).attr_int(int64_t(to)).expect(want);
    }
}

TEST(Cast, SpecialFloats) {
  const double nan = std::nan("");
  KernelTester(OpId::Cast).in(HostTensor::of(DType::kF32, {3}, {nan, 0, -0.0})).out(DType::kBool, {3})
      .attr_int(int64_t(DType::kBool)).expect({1, 0, 0});
  KernelTester(OpId::Cast).in(HostTensor::of(DType::kF32, {2}, {nan, 1e30})).out(DType::kI32, {2})
      .attr_int(int64_t(DType::kI32)).expect({0, double(std::numeric_limits<int32_t>::max())});
  KernelTester(OpId::Cast).in(HostTensor::of(DType::kF32, {2}, {1e5, -nan})).out(DType::kF16, {2})
      .attr_int(int64_t(DType::kF16)).expect({INFINITY, nan});
  HostTensor big(DType::kI64, {1});
  big.set_int(0, (int64_t(1) << 62) + 1);
  KernelTester(OpId::Cast).in(big).out(DType::kI32, {1}).attr_int(int64_t(DType::kI32)).expect({1});
}

TEST(Full, FillsWithTheValue) {
  KernelTester(OpId::Full).in(HostTensor::scalar(DType::kF16, 1.5)).out(DType::kF16, {2, 3}).attr_ints({2, 3})
      .expect({1.5, 1.5, 1.5, 1.5, 1.5, 1.5});
  KernelTester(OpId::Full)
      .in(HostTensor::scalar(DType::kI64, -7))
      .in(HostTensor::scalar(DType::kI64, 3))  // a dynamic dim, already in the output's shape
      .out(DType::kI64, {3})
      .attr_ints({ops::attr::kDynamicDim})
      .expect({-7, -7, -7});
  KernelTester(OpId::Full).in(HostTensor::scalar(DType::kBool, 1)).out(DType::kBool, {0}).attr_ints({0}).expect({});
}

TEST(ShapeDim, WritesTheDim) {
  KernelTester(OpId::ShapeDim).in(HostTensor(DType::kF32, {4, 0, 9})).out(DType::kI64, {}).attr_int(2)
      .expect_ints({9});
  KernelTester(OpId::ShapeDim).in(HostTensor(DType::kF32, {4, 0, 9})).out(DType::kI64, {}).attr_int(1)
      .expect_ints({0});
}

TEST(KernelTable, EveryOpHasAReferenceKernel) {
  for (int i = 0; i < ops::kNumOps; ++i) {
    const KernelFn fn = reference_kernel(OpId(i));
    ASSERT_NE(fn, nullptr);
    // A kernel called with no operands reports it instead of reading past them.
    KernelContext ctx;
    const Status s = fn(ctx, ops::Attrs{}, {}, {});
    EXPECT_EQ(s.code(), StatusCode::kInternal) << "op " << i << ": " << s.message();
  }
  const Status s = reference_kernel(OpId(ops::kNumOps))(KernelContext{}, ops::Attrs{}, {}, {});
  EXPECT_EQ(s.code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace sg::kernels::testing
