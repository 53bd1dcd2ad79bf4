// The f32 max/min/argmax/argmin kernel (kernels/xnnpack/reduce.cc) against the
// reference kernel, bit for bit: NaN first, middle, last and in a vector's tail,
// zeros of both signs, infinities, rows shorter and longer than a vector, the
// layouts it takes itself and those it leaves to the reference.
#include <cstring>
#include <limits>

#include "xnnpack/xnn_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

ops::Attrs reduce_attrs(OpId op, std::vector<int64_t> axes, bool keepdims = false) {
  ops::Attrs a;
  if (op == OpId::ArgMax || op == OpId::ArgMin)
    a.values = {ops::AttrValue::Int(axes.at(0)), ops::AttrValue::Int(keepdims)};
  else
    a.values = {ops::AttrValue::Ints(std::move(axes)), ops::AttrValue::Int(keepdims)};
  return a;
}

// Runs the prepared kernel and the reference on `x`; both must succeed with the
// same bytes, or both fail.
void expect_same(OpId op, const ops::Attrs& attrs, HostTensor x, const std::string& what) {
  SCOPED_TRACE(std::string(ops::op_def(op).name) + " " + what);
  std::unique_ptr<PreparedKernel> kernel = xnnpack_prepare(op, attrs, std::vector<InputInfo>{info_of(x, false, true)});
  ASSERT_NE(kernel, nullptr);
  EXPECT_STREQ(kernel->name(), "sg:reduce_f32");
  const std::vector<int64_t> shape = infer_shape(op, attrs, {x});
  const DType out = op == OpId::ArgMax || op == OpId::ArgMin ? DType::kI64 : DType::kF32;
  HostTensor want(out, shape), got(out, shape);
  want.poison();
  got.poison();
  const TensorRef in = x.ref();
  TensorRef want_ref = want.ref(), got_ref = got.ref();
  KernelContext ctx;
  const Status rs = reference_kernel(op)(ctx, attrs, std::span<const TensorRef>(&in, 1), std::span<TensorRef>(&want_ref, 1));
  const Status s = kernel->run(ctx, std::span<const TensorRef>(&in, 1), std::span<TensorRef>(&got_ref, 1));
  ASSERT_EQ(s.ok(), rs.ok()) << s.message() << " / reference: " << rs.message();
  if (!rs.ok()) {
    EXPECT_EQ(s.message(), rs.message());
    return;
  }
  EXPECT_TRUE(got.guard_intact());
  EXPECT_EQ(std::memcmp(got_ref.data, want_ref.data, size_t(want.numel()) * dtype_size(out)), 0)
      << "got " << ::testing::PrintToString(got.values()) << ", want " << ::testing::PrintToString(want.values());
}

const OpId kOps[] = {OpId::Max, OpId::Min, OpId::ArgMax, OpId::ArgMin};

TEST(OwnReduce, RandomRowsOfEveryLength) {
  uint32_t seed = 7;
  for (OpId op : kOps)
    for (int64_t n : {1, 3, 4, 7, 15, 16, 17, 31, 32, 33, 100, 1000, 4097})
      expect_same(op, reduce_attrs(op, {0}), HostTensor::random(DType::kF32, {n}, seed++, -50, 50),
                  "[" + std::to_string(n) + "]");
}

TEST(OwnReduce, TrailingAxesOfLargerTensors) {
  uint32_t seed = 70;
  for (OpId op : kOps) {
    const bool arg = op == OpId::ArgMax || op == OpId::ArgMin;
    expect_same(op, reduce_attrs(op, {2}), HostTensor::random(DType::kF32, {3, 5, 17}, seed++), "[3,5,17] axis 2");
    expect_same(op, reduce_attrs(op, {1}, true), HostTensor::random(DType::kF32, {6, 40}, seed++), "keepdims");
    if (!arg) {
      expect_same(op, reduce_attrs(op, {1, 2}), HostTensor::random(DType::kF32, {3, 5, 17}, seed++), "axes 1, 2");
      expect_same(op, reduce_attrs(op, {0, 1, 2}), HostTensor::random(DType::kF32, {3, 5, 17}, seed++), "all");
    }
    // Size-1 dims after the axis keep the rows dense.
    expect_same(op, reduce_attrs(op, {1}), HostTensor::random(DType::kF32, {4, 9, 1}, seed++), "[4,9,1] axis 1");
  }
}

TEST(OwnReduce, OtherLayoutsGoToTheReference) {
  uint32_t seed = 700;
  for (OpId op : kOps) {
    expect_same(op, reduce_attrs(op, {1}), HostTensor::random(DType::kF32, {3, 5, 17}, seed++), "middle axis");
    expect_same(op, reduce_attrs(op, {0}), HostTensor::random(DType::kF32, {8, 3}, seed++), "first axis");
  }
  expect_same(OpId::Max, reduce_attrs(OpId::Max, {0, 2}), HostTensor::random(DType::kF32, {3, 5, 17}, seed++),
              "axes 0, 2");
}

TEST(OwnReduce, NanWhereverItIs) {
  for (OpId op : kOps) {
    for (int64_t at : {0, 1, 8, 15, 16, 20, 34}) {
      HostTensor x = HostTensor::random(DType::kF32, {35}, uint32_t(at + 1), -5, 5);
      x.set(at, kNaN);
      if (at + 3 < 35) x.set(at + 3, kNaN);  // the first NaN counts
      expect_same(op, reduce_attrs(op, {0}), x, "NaN at " + std::to_string(at));
    }
  }
}

TEST(OwnReduce, ZerosOfBothSignsAndInfinities) {
  const std::vector<std::vector<double>> rows = {
      {-0.0, 0.0},
      {0.0, -0.0},
      {-1.0, -0.0, -2.0, 0.0, -0.0, -3.0, -1.0, -1.0, -4.0, -5.0, -6.0, -7.0, -8.0, -9.0, -1.0, -1.0, -2.0, -0.0},
      {1.0, 0.0, 2.0, -0.0, 0.0, 3.0, 1.0, 1.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 1.0, 1.0, 2.0, 0.0, 0.5},
      {-kInf, -kInf, -kInf},
      {kInf, kInf, kInf, kInf, kInf, kInf, kInf, kInf, kInf, kInf, kInf, kInf, kInf, kInf, kInf, kInf, kInf},
      {-kInf, kInf, 3.0, kInf, -kInf},
      {2.0, 2.0, 2.0, 1.0, 2.0},
  };
  for (OpId op : kOps)
    for (size_t r = 0; r < rows.size(); ++r)
      expect_same(op, reduce_attrs(op, {0}), HostTensor::of(DType::kF32, {int64_t(rows[r].size())}, rows[r]),
                  "row " + std::to_string(r));
}

// An empty reduced axis is refused by the shape rule; no rows at all is not.
TEST(OwnReduce, NoRows) {
  for (OpId op : kOps) expect_same(op, reduce_attrs(op, {1}), HostTensor(DType::kF32, {0, 4}), "[0, 4] axis 1");
}

TEST(OwnReduce, OnlyFloat32IsTaken) {
  HostTensor x = HostTensor::random(DType::kI64, {10}, 1, -5, 5);
  for (OpId op : kOps)
    EXPECT_EQ(xnnpack_prepare(op, reduce_attrs(op, {0}), std::vector<InputInfo>{info_of(x, false)}), nullptr);
}

}  // namespace
}  // namespace sg::kernels::testing
