#include <gtest/gtest.h>

#include "ops/rule_tester.h"

namespace sg::ops {
namespace {

using namespace testing;
const Attrs kNoAttrs;

TEST(Binary, BroadcastsLikeNumPy) {
  EXPECT_EQ(run_both(OpId::Add, kNoAttrs, {F32({2, 3}), F32({2, 3})}).shape, "[2, 3]");
  EXPECT_EQ(run_both(OpId::Add, kNoAttrs, {F32({2, 3}), F32({3})}).shape, "[2, 3]");
  EXPECT_EQ(run_both(OpId::Mul, kNoAttrs, {F32({4, 1, 5}), F32({3, 1})}).shape, "[4, 3, 5]");
  EXPECT_EQ(run_both(OpId::Sub, kNoAttrs, {F32({}), F32({2, 2})}).shape, "[2, 2]");
  EXPECT_EQ(run_both(OpId::Add, kNoAttrs, {F32({0, 3}), F32({1, 3})}).shape, "[0, 3]");
}

TEST(Binary, UnequalStaticDimsFail) {
  auto r = run_both(OpId::Add, kNoAttrs, {F32({3, 4}), F32({5, 4})});
  EXPECT_ERROR_HAS(r, "add: cannot broadcast [3, 4] with [5, 4]");
  EXPECT_ERROR_HAS(run_both(OpId::Mul, kNoAttrs, {F32({2}), F32({3})}), "mul: cannot broadcast");
}

TEST(Binary, OperandsMustShareADtype) {
  auto r = run_both(OpId::Add, kNoAttrs, {F32({2}), T(DType::kI32, {2})});
  EXPECT_ERROR_HAS(r, "add: operands have different dtypes f32 and i32; cast one with astype");
}

TEST(Binary, ResultDtypes) {
  EXPECT_EQ(run_both(OpId::Less, kNoAttrs, {F32({2}), F32({2})}).type.dtype, DType::kBool);
  EXPECT_EQ(run_both(OpId::Equal, kNoAttrs, {T(DType::kBool, {2}), T(DType::kBool, {})}).type.dtype, DType::kBool);
  EXPECT_EQ(run_both(OpId::Div, kNoAttrs, {T(DType::kI32, {2}), T(DType::kI32, {2})}).type.dtype, DType::kF32);
  EXPECT_EQ(run_both(OpId::Div, kNoAttrs, {T(DType::kF16, {2}), T(DType::kF16, {2})}).type.dtype, DType::kF16);
  EXPECT_EQ(run_both(OpId::Div, kNoAttrs, {T(DType::kBool, {2}), T(DType::kBool, {2})}).type.dtype, DType::kF32);
  EXPECT_EQ(run_both(OpId::FloorDiv, kNoAttrs, {T(DType::kI64, {2}), T(DType::kI64, {2})}).type.dtype, DType::kI64);
  EXPECT_EQ(run_both(OpId::Maximum, kNoAttrs, {T(DType::kBool, {2}), T(DType::kBool, {2})}).type.dtype,
            DType::kBool);
  EXPECT_EQ(run_both(OpId::LogicalOr, kNoAttrs, {T(DType::kBool, {2}), T(DType::kBool, {2})}).type.dtype,
            DType::kBool);
}

TEST(Binary, DtypesOutsideTheTableFail) {
  EXPECT_ERROR_HAS(run_both(OpId::Add, kNoAttrs, {T(DType::kBool, {2}), T(DType::kBool, {2})}),
                   "add: not defined for bool");
  EXPECT_ERROR_HAS(run_both(OpId::Pow, kNoAttrs, {T(DType::kBool, {}), T(DType::kBool, {})}), "pow:");
  EXPECT_ERROR_HAS(run_both(OpId::LogicalAnd, kNoAttrs, {F32({2}), F32({2})}),
                   "logical_and: operands must be bool, got f32");
}

TEST(Binary, SymbolicDims) {
  auto r = run(OpId::Add, kNoAttrs, {SF32({N, 4}), SF32({N, 4})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.shape, "[N, 4]");
  EXPECT_EQ(run(OpId::Add, kNoAttrs, {SF32({N, 1}), SF32({1, M})}).shape, "[N, M]");
  EXPECT_EQ(run(OpId::Add, kNoAttrs, {SF32({N * SymDim(2)}), SF32({N + N})}).shape, "[N*2]");
  // Only the binding can tell: accepted, checked at run time. A static side is the
  // result for every binding that passes that check.
  EXPECT_EQ(run(OpId::Add, kNoAttrs, {SF32({N}), SF32({M})}).shape, "[N]");
  EXPECT_EQ(run(OpId::Add, kNoAttrs, {SF32({N}), SF32({3})}).shape, "[3]");
  EXPECT_EQ(run(OpId::Add, kNoAttrs, {SF32({3}), SF32({N})}).shape, "[3]");
  // N and N+1 can never be equal, and neither is the static 1.
  EXPECT_ERROR_HAS(run(OpId::Sub, kNoAttrs, {SF32({N}), SF32({N + SymDim(1)})}),
                   "sub: cannot broadcast [N] with [N+1]");
}

TEST(Binary, WarnsWhenAVectorMeetsAColumn) {
  auto r = run(OpId::Sub, kNoAttrs, {SF32({N}), SF32({N, 1})});
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(r.shape, "[N, N]");
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0], "sub: broadcasting [N] with [N, 1] gives [N, N]; did you mean to reshape one of them?");
  EXPECT_EQ(run_both(OpId::Mul, kNoAttrs, {F32({5, 1}), F32({5})}).warnings.size(), 1u);
}

TEST(Binary, DeliberateOuterProductsStayQuiet) {
  EXPECT_TRUE(run(OpId::Sub, kNoAttrs, {SF32({N, 1}), SF32({1, N})}).warnings.empty());
  EXPECT_TRUE(run(OpId::Sub, kNoAttrs, {SF32({M}), SF32({N, 1})}).warnings.empty());
  EXPECT_TRUE(run(OpId::Add, kNoAttrs, {SF32({N, 4}), SF32({4})}).warnings.empty());
  EXPECT_TRUE(run_both(OpId::Add, kNoAttrs, {F32({1}), F32({1, 1})}).warnings.empty());
}

// SPEC §8: only the binding can compare N*2 with 5, but no binding makes N*2 5 or
// 1, so the broadcast fails for every input: a warning, once per node.
TEST(Binary, WarnsWhereNoBindingBroadcasts) {
  const SymDim n2 = N * SymDim(2);
  auto r = run(OpId::Add, kNoAttrs, {SF32({n2, 4}), SF32({5, 4})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0], "add: cannot broadcast [N*2, 4] with [5, 4]: N*2 can be neither 5 nor 1 for any N, so "
                           "this fails at run time for every input");
  auto flat = run(OpId::Add, kNoAttrs, {SF32({M * SymDim(5)}), SF32({3})});
  ASSERT_EQ(flat.warnings.size(), 1u);
  EXPECT_EQ(flat.warnings[0], "add: cannot broadcast [M*5] with [3]: M*5 can be neither 3 nor 1 for any M, so this "
                              "fails at run time for every input");
  // Two symbolic sides: odd against even, neither ever 1.
  auto two = run(OpId::Mul, kNoAttrs, {SF32({n2 + SymDim(3)}), SF32({M * SymDim(2)})});
  ASSERT_EQ(two.warnings.size(), 1u);
  EXPECT_EQ(two.warnings[0], "mul: cannot broadcast [N*2+3] with [M*2]: N*2+3 and M*2 cannot be equal, and neither "
                             "can be 1, for any N and M, so this fails at run time for every input");
  // Every operand of where and clip, the condition too; one warning for two bad axes.
  const auto cond = S(DType::kBool, {n2, 3});
  auto w = run(OpId::Where, kNoAttrs, {cond, SF32({7, M * SymDim(3) + SymDim(2)}), SF32({1, 1})});
  ASSERT_EQ(w.warnings.size(), 1u);
  EXPECT_EQ(w.warnings[0], "where: cannot broadcast [N*2, 3] with [7, M*3+2] with [1, 1]: M*3+2 can be neither 3 "
                           "nor 1 for any M, so this fails at run time for every input");
  auto c = run(OpId::Clip, kNoAttrs, {SF32({n2}), SF32({}), SF32({9})});
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("clip: cannot broadcast [N*2] with [] with [9]: N*2 can be neither 9 nor 1"),
            std::string::npos);
}

// Sound: where some binding of the symbols (each >= 0) lets it through, no warning.
TEST(Binary, NoWarningWhereSomeBindingBroadcasts) {
  const SymDim n2 = N * SymDim(2);
  for (const SymDim& d : {SymDim(6), SymDim(1), M, M * SymDim(2), N * M, M + K}) {
    auto r = run(OpId::Add, kNoAttrs, {SF32({n2}), SF32({d})});
    ASSERT_TRUE(r.status.ok());
    EXPECT_TRUE(r.warnings.empty()) << r.warnings[0];
  }
  EXPECT_TRUE(run(OpId::Add, kNoAttrs, {SF32({N * N, 4}), SF32({4, 4})}).warnings.empty());      // N = 2
  EXPECT_TRUE(run(OpId::Add, kNoAttrs, {SF32({n2 + SymDim(1)}), SF32({5})}).warnings.empty());   // N = 2
  EXPECT_TRUE(run(OpId::Add, kNoAttrs, {SF32({n2 + SymDim(1)}), SF32({M * SymDim(2)})}).warnings.empty());  // N = 0
  // N*M*2+3 is never N*M, but N*M can be 1 (N = M = 1), and then it broadcasts.
  EXPECT_TRUE(run(OpId::Add, kNoAttrs, {SF32({N * M}), SF32({N * M * SymDim(2) + SymDim(3)})}).warnings.empty());
  EXPECT_TRUE(run_both(OpId::Add, kNoAttrs, {F32({6, 4}), F32({1, 4})}).warnings.empty());
}

TEST(Unary, Dtypes) {
  EXPECT_EQ(run_both(OpId::Exp, kNoAttrs, {T(DType::kI32, {2})}).type.dtype, DType::kF32);
  EXPECT_EQ(run_both(OpId::Gelu, kNoAttrs, {T(DType::kBool, {2})}).type.dtype, DType::kF32);
  EXPECT_EQ(run_both(OpId::Sqrt, kNoAttrs, {T(DType::kF16, {2})}).type.dtype, DType::kF16);
  EXPECT_EQ(run_both(OpId::Floor, kNoAttrs, {T(DType::kI64, {2})}).type.dtype, DType::kI64);
  EXPECT_EQ(run_both(OpId::Neg, kNoAttrs, {T(DType::kI32, {2, 3})}).shape, "[2, 3]");
  EXPECT_EQ(run_both(OpId::IsNan, kNoAttrs, {T(DType::kI32, {2})}).type.dtype, DType::kBool);
  EXPECT_EQ(run_both(OpId::LogicalNot, kNoAttrs, {T(DType::kBool, {})}).type.dtype, DType::kBool);
  EXPECT_ERROR_HAS(run_both(OpId::LogicalNot, kNoAttrs, {F32({2})}), "logical_not: operand must be bool");
  EXPECT_ERROR_HAS(run_both(OpId::Round, kNoAttrs, {T(DType::kBool, {2})}), "round: not defined for bool");
  EXPECT_ERROR_HAS(run_both(OpId::Neg, kNoAttrs, {T(DType::kBool, {2})}), "neg:");
  EXPECT_EQ(run(OpId::Relu, kNoAttrs, {SF32({N, 3})}).shape, "[N, 3]");
}

TEST(Where, BroadcastsThreeWays) {
  auto r = run_both(OpId::Where, kNoAttrs, {T(DType::kBool, {2, 1}), F32({3}), F32({})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.shape, "[2, 3]");
  EXPECT_EQ(r.type.dtype, DType::kF32);
  EXPECT_ERROR_HAS(run_both(OpId::Where, kNoAttrs, {F32({2}), F32({2}), F32({2})}), "where: condition must be bool");
  EXPECT_ERROR_HAS(run_both(OpId::Where, kNoAttrs, {T(DType::kBool, {2}), F32({2}), T(DType::kI64, {2})}),
                   "different dtypes f32 and i64");
  EXPECT_ERROR_HAS(run_both(OpId::Where, kNoAttrs, {T(DType::kBool, {2}), F32({3}), F32({2})}),
                   "where: cannot broadcast [2] with [3] with [2]");
}

TEST(Clip, SameDtypeAndBroadcast) {
  EXPECT_EQ(run_both(OpId::Clip, kNoAttrs, {F32({4, 3}), F32({}), F32({3})}).shape, "[4, 3]");
  EXPECT_ERROR_HAS(run_both(OpId::Clip, kNoAttrs, {F32({4}), T(DType::kI32, {}), F32({})}), "clip:");
  EXPECT_ERROR_HAS(run_both(OpId::Clip, kNoAttrs, {F32({4}), F32({5}), F32({})}), "cannot broadcast");
}

TEST(Cast, TakesItsDtypeFromTheAttribute) {
  auto r = run_both(OpId::Cast, attrs({I(int64_t(DType::kI32))}), {F32({2, 3})});
  EXPECT_EQ(r.type.dtype, DType::kI32);
  EXPECT_EQ(r.shape, "[2, 3]");
  EXPECT_FALSE(run_both(OpId::Cast, attrs({I(9)}), {F32({2})}).status.ok());
}

TEST(DtypeHelpers, FollowTheSpecTable) {
  EXPECT_EQ(binary_result_dtype(OpId::Div, DType::kI64), DType::kF32);
  EXPECT_EQ(binary_result_dtype(OpId::Add, DType::kI32), DType::kI32);
  EXPECT_EQ(binary_result_dtype(OpId::GreaterEqual, DType::kF16), DType::kBool);
  EXPECT_EQ(unary_result_dtype(OpId::Tanh, DType::kI64), DType::kF32);
  EXPECT_EQ(unary_result_dtype(OpId::Abs, DType::kI64), DType::kI64);
  EXPECT_EQ(unary_result_dtype(OpId::IsNan, DType::kF32), DType::kBool);
  EXPECT_EQ(reduction_result_dtype(OpId::Sum, DType::kBool), DType::kI64);
  EXPECT_EQ(reduction_result_dtype(OpId::Prod, DType::kI32), DType::kI64);
  EXPECT_EQ(reduction_result_dtype(OpId::Sum, DType::kF16), DType::kF16);
  EXPECT_EQ(reduction_result_dtype(OpId::Mean, DType::kI64), DType::kF32);
  EXPECT_EQ(reduction_result_dtype(OpId::Max, DType::kI32), DType::kI32);
  EXPECT_EQ(reduction_result_dtype(OpId::Any, DType::kF32), DType::kBool);
  EXPECT_EQ(reduction_result_dtype(OpId::ArgMax, DType::kF32), DType::kI64);
}

}  // namespace
}  // namespace sg::ops
