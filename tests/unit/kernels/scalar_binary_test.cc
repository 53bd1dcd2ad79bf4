// The rank-0 kernels of the elementwise binary ops (scalar_binary_kernel): for every
// op and dtype pair the op allows, on operand pairs with zeros, signs, wrap-around,
// NaN and infinities, the same bytes as the reference kernel, or the same error.
#include <cstring>
#include <limits>

#include "kernels/kernel_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;

const OpId kOps[] = {OpId::Add,     OpId::Sub,          OpId::Mul,     OpId::Div,     OpId::FloorDiv,
                     OpId::Mod,     OpId::Pow,          OpId::Maximum, OpId::Minimum, OpId::Less,
                     OpId::LessEqual, OpId::Greater,    OpId::GreaterEqual, OpId::Equal, OpId::NotEqual,
                     OpId::LogicalAnd, OpId::LogicalOr};
const DType kTypes[] = {DType::kF32, DType::kF16, DType::kI32, DType::kI64, DType::kBool};

std::vector<double> values_for(DType t) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  switch (t) {
    case DType::kF32:
    case DType::kF16: return {0.0, -0.0, 1.5, -2.5, 7.0, 3.0, inf, -inf, std::numeric_limits<double>::quiet_NaN()};
    case DType::kI32: return {0, 1, -1, 7, -3, 2147483647.0, -2147483648.0};
    case DType::kI64: return {0, 1, -1, 7, -3, 9.0e15, -9.0e15};
    case DType::kBool: return {0, 1};
  }
  return {};
}

// f(x, y, reference status, reference result) for every operand pair of values_for(in).
template <class F>
void for_each_pair(OpId op, DType in, DType out, F f) {
  for (double a : values_for(in))
    for (double b : values_for(in)) {
      SCOPED_TRACE(::testing::Message() << ops::op_def(op).name << " " << dtype_name(in) << " -> " << dtype_name(out)
                                        << " (" << a << ", " << b << ")");
      HostTensor x = HostTensor::scalar(in, a), y = HostTensor::scalar(in, b);
      HostTensor want(out, {});
      want.poison();
      const TensorRef ins[2] = {x.ref(), y.ref()};
      TensorRef w = want.ref();
      const Status rs = reference_kernel(op)({}, ops::Attrs{}, std::span<const TensorRef>(ins), std::span<TensorRef>(&w, 1));
      f(x, y, rs, want);
    }
}

TEST(ScalarBinary, SameBytesAsTheReferenceKernel) {
  int pairs = 0, kernels_found = 0;
  for (OpId op : kOps)
    for (DType in : kTypes)
      for (DType out : kTypes) {
        const KernelFn scalar = scalar_binary_kernel(op, in, out);
        if (scalar == nullptr) continue;
        ++kernels_found;
        for_each_pair(op, in, out, [&](HostTensor& x, HostTensor& y, const Status& rs, HostTensor& want) {
          HostTensor got(out, {});
          got.poison();
          const TensorRef ins[2] = {x.ref(), y.ref()};
          TensorRef g = got.ref();
          const Status ss = scalar({}, ops::Attrs{}, std::span<const TensorRef>(ins), std::span<TensorRef>(&g, 1));
          ASSERT_EQ(ss.ok(), rs.ok()) << ss.message() << " / reference: " << rs.message();
          if (!rs.ok()) {
            EXPECT_EQ(ss.message(), rs.message());
            return;
          }
          EXPECT_EQ(std::memcmp(g.data, want.ref().data, dtype_size(out)), 0)
              << "got " << got.at(0) << ", want " << want.at(0);
          ++pairs;
        });
      }
  // Arithmetic on each dtype, comparisons to bool, int / int to f32, bool + bool.
  EXPECT_NE(scalar_binary_kernel(OpId::Add, DType::kI64, DType::kI64), nullptr);
  EXPECT_NE(scalar_binary_kernel(OpId::Less, DType::kF32, DType::kBool), nullptr);
  EXPECT_NE(scalar_binary_kernel(OpId::Div, DType::kI32, DType::kF32), nullptr);
  EXPECT_EQ(scalar_binary_kernel(OpId::Add, DType::kI64, DType::kBool), nullptr);
  EXPECT_EQ(scalar_binary_kernel(OpId::Neg, DType::kI64, DType::kI64), nullptr);
  EXPECT_GT(kernels_found, 60);
  EXPECT_GT(pairs, 2000);
}

// The fixed runs (scalar_binary_fixed) write the reference kernel's bytes, and
// exist exactly for the pairs where no value makes the op fail: integer `//`, `%`
// and `**` check their right operand, so they keep the kernel that can say so.
TEST(ScalarBinary, FixedRunsSameBytesWhereTheOpCannotFail) {
  int pairs = 0, fixed_found = 0;
  for (OpId op : kOps)
    for (DType in : kTypes)
      for (DType out : kTypes) {
        const FixedFn fixed = scalar_binary_fixed(op, in, out);
        if (scalar_binary_kernel(op, in, out) == nullptr) {
          EXPECT_EQ(fixed, nullptr) << ops::op_def(op).name << " " << dtype_name(in) << " -> " << dtype_name(out);
          continue;
        }
        // Integer arithmetic (an integral result; bool ** bool is logic) is what
        // checks its right operand.
        const bool integral = out == DType::kI32 || out == DType::kI64;
        const bool checks = ((op == OpId::FloorDiv || op == OpId::Mod) && (integral || out == DType::kBool)) ||
                            (op == OpId::Pow && integral);
        EXPECT_EQ(fixed == nullptr, checks) << ops::op_def(op).name << " " << dtype_name(in) << " -> "
                                            << dtype_name(out);
        if (fixed == nullptr) continue;
        ++fixed_found;
        for_each_pair(op, in, out, [&](HostTensor& x, HostTensor& y, const Status& rs, HostTensor& want) {
          ASSERT_TRUE(rs.ok()) << rs.message();
          HostTensor got(out, {});
          got.poison();
          const TensorRef operands[3] = {x.ref(), y.ref(), got.ref()};
          fixed(0, operands);
          EXPECT_EQ(std::memcmp(got.ref().data, want.ref().data, dtype_size(out)), 0)
              << "got " << got.at(0) << ", want " << want.at(0);
          ++pairs;
        });
      }
  EXPECT_NE(scalar_binary_fixed(OpId::FloorDiv, DType::kF32, DType::kF32), nullptr);
  EXPECT_EQ(scalar_binary_fixed(OpId::FloorDiv, DType::kI64, DType::kI64), nullptr);
  EXPECT_GT(fixed_found, 50);
  EXPECT_GT(pairs, 1500);
}

TEST(ScalarBinary, RefusesOperandsItWasNotMadeFor) {
  const KernelFn add = scalar_binary_kernel(OpId::Add, DType::kI64, DType::kI64);
  ASSERT_NE(add, nullptr);
  HostTensor x = HostTensor::scalar(DType::kI32, 1), v(DType::kI64, {2});
  HostTensor out(DType::kI64, {});
  const TensorRef wrong_dtype[2] = {x.ref(), x.ref()};
  const TensorRef wrong_rank[2] = {v.ref(), v.ref()};
  TensorRef o = out.ref();
  EXPECT_EQ(add({}, ops::Attrs{}, std::span<const TensorRef>(wrong_dtype), std::span<TensorRef>(&o, 1)).code(), StatusCode::kInternal);
  EXPECT_EQ(add({}, ops::Attrs{}, std::span<const TensorRef>(wrong_rank), std::span<TensorRef>(&o, 1)).code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace sg::kernels::testing
