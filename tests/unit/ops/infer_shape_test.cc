#include <gtest/gtest.h>

#include "ops/rule_tester.h"

namespace sg::ops {
namespace {

using namespace testing;

Attrs shape(std::vector<int64_t> dims) { return attrs({Is(std::move(dims))}); }
Attrs axis(int64_t a) { return attrs({I(a)}); }
const TensorType<int64_t> kI64Scalar = T(DType::kI64, {});
const TensorType<SymDim> kSymI64Scalar = S(DType::kI64, {});

TEST(Reshape, StaticShapes) {
  EXPECT_EQ(run_both(OpId::Reshape, shape({3, 2}), {F32({2, 3})}).shape, "[3, 2]");
  EXPECT_EQ(run_both(OpId::Reshape, shape({-1}), {F32({2, 3})}).shape, "[6]");
  EXPECT_EQ(run_both(OpId::Reshape, shape({2, -1, 2}), {F32({4, 3})}).shape, "[2, 3, 2]");
  EXPECT_EQ(run_both(OpId::Reshape, shape({}), {F32({1, 1})}).shape, "[]");
  EXPECT_EQ(run_both(OpId::Reshape, shape({-1, 5}), {F32({0, 5})}).shape, "[0, 5]");
}

TEST(Reshape, ElementCountsMustAgree) {
  EXPECT_ERROR_HAS(run_both(OpId::Reshape, shape({4}), {F32({2, 3})}),
                   "reshape: cannot reshape [2, 3] (6 elements) into [4] (4 elements)");
  EXPECT_ERROR_HAS(run_both(OpId::Reshape, shape({-1, 4}), {F32({2, 3})}), "6 is not a multiple of 4");
  EXPECT_ERROR_HAS(run_both(OpId::Reshape, shape({0, -1}), {F32({0, 3})}), "-1 is ambiguous");
}

TEST(Reshape, DynamicDims) {
  auto r = run_both(OpId::Reshape, shape({-2, -1}), {F32({4, 6, 6, 8}), kI64Scalar}, {std::nullopt, 4});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.shape, "[4, 288]");
  EXPECT_ERROR_HAS(run_both(OpId::Reshape, shape({-2}), {F32({6}), kI64Scalar}, {std::nullopt, -6}),
                   "dimension -6 is negative");
  EXPECT_ERROR_HAS(run_both(OpId::Reshape, shape({-2, 2}), {F32({6}), F32({})}, {std::nullopt, 3}),
                   "must be an integer scalar");
}

TEST(Reshape, SolvesMinusOneSymbolically) {
  // reshape(y, (y.shape[0], -1)) of a [N, 6, 6, 8] value: the dynamic dim is bound to N.
  auto r = run(OpId::Reshape, shape({-2, -1}), {SF32({N, 6, 6, 8}), kSymI64Scalar}, {std::nullopt, N});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.shape, "[N, 288]");
  EXPECT_EQ(r.fresh, 0);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(run(OpId::Reshape, shape({-1, 8}), {SF32({N, 6, 6, 8})}).shape, "[N*36, 8]");
  EXPECT_EQ(run(OpId::Reshape, shape({-1}), {SF32({N, M})}).shape, "[N*M]");
  // Static target against a symbolic count: decided at run time.
  EXPECT_TRUE(run(OpId::Reshape, shape({6}), {SF32({N, 3})}).status.ok());
  // Counts that differ by a constant can never agree.
  EXPECT_ERROR_HAS(run(OpId::Reshape, shape({-2, 2}), {SF32({N + SymDim(1), 2}), kSymI64Scalar}, {std::nullopt, N}),
                   "reshape: cannot reshape [N+1, 2] (N*2+2 elements) into [N, 2] (N*2 elements)");
}

TEST(Reshape, UnknownDynamicDimBecomesFresh) {
  auto r = run(OpId::Reshape, shape({-2, 8}), {SF32({N, 8}), kSymI64Scalar}, {std::nullopt, std::nullopt});
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(r.fresh, 1);
  EXPECT_EQ(r.shape, "[F0, 8]");
}

TEST(Reshape, WarnsOnBatchContamination) {
  auto r = run(OpId::Reshape, shape({-1, 4}), {SF32({N, 6})});
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(r.fresh, 1);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("reshape batch contamination"), std::string::npos) << r.warnings[0];
  EXPECT_NE(r.warnings[0].find("[N, 6] (N*6 elements) into [-1, 4]"), std::string::npos) << r.warnings[0];
  EXPECT_TRUE(run(OpId::Reshape, shape({-1, 3}), {SF32({N, 6})}).warnings.empty());
}

TEST(BroadcastTo, FollowsNumPy) {
  EXPECT_EQ(run_both(OpId::BroadcastTo, shape({2, 3}), {F32({3})}).shape, "[2, 3]");
  EXPECT_EQ(run_both(OpId::BroadcastTo, shape({4, 2, 3}), {F32({2, 1})}).shape, "[4, 2, 3]");
  EXPECT_ERROR_HAS(run_both(OpId::BroadcastTo, shape({2, 4}), {F32({3})}), "broadcast_to: cannot broadcast [3] to [2, 4]");
  EXPECT_ERROR_HAS(run_both(OpId::BroadcastTo, shape({3}), {F32({2, 3})}), "cannot broadcast [2, 3] to [3]");
  auto r = run(OpId::BroadcastTo, shape({-2, 4}), {SF32({1, 4}), kSymI64Scalar}, {std::nullopt, N});
  EXPECT_EQ(r.shape, "[N, 4]");
  EXPECT_FALSE(run_both(OpId::BroadcastTo, shape({-1, 4}), {F32({1, 4})}).status.ok());
}

TEST(Full, ShapeFromAttributesAndDynamicDims) {
  auto r = run_both(OpId::Full, shape({2, -2}), {T(DType::kI32, {}), kI64Scalar}, {std::nullopt, 5});
  EXPECT_EQ(r.shape, "[2, 5]");
  EXPECT_EQ(r.type.dtype, DType::kI32);
  EXPECT_EQ(run(OpId::Full, shape({-2}), {SF32({}), kSymI64Scalar}, {std::nullopt, M + SymDim(1)}).shape, "[M+1]");
  EXPECT_ERROR_HAS(run_both(OpId::Full, shape({2}), {F32({1})}), "full: the fill value must be a scalar");
}

TEST(Transpose, Permutes) {
  EXPECT_EQ(run_both(OpId::Transpose, attrs({Is({2, 0, 1})}), {F32({2, 3, 4})}).shape, "[4, 2, 3]");
  EXPECT_EQ(run(OpId::Transpose, attrs({Is({1, 0})}), {SF32({N, 3})}).shape, "[3, N]");
  EXPECT_FALSE(run_both(OpId::Transpose, attrs({Is({0, 0})}), {F32({2, 3})}).status.ok());
}

TEST(ExpandDimsAndSqueeze, OutputAndInputAxes) {
  EXPECT_EQ(run_both(OpId::ExpandDims, attrs({Is({0, 2})}), {F32({3, 4})}).shape, "[1, 3, 1, 4]");
  EXPECT_EQ(run_both(OpId::ExpandDims, attrs({Is({2})}), {F32({3, 4})}).shape, "[3, 4, 1]");
  EXPECT_EQ(run_both(OpId::Squeeze, attrs({Is({0, 2})}), {F32({1, 3, 1})}).shape, "[3]");
  EXPECT_ERROR_HAS(run_both(OpId::Squeeze, attrs({Is({1})}), {F32({3, 4})}),
                   "squeeze: cannot squeeze axis 1 of [3, 4]: its size is 4, not 1");
  EXPECT_EQ(run(OpId::Squeeze, attrs({Is({1})}), {SF32({N, M})}).shape, "[N]");  // run time checks M == 1
}

TEST(Concatenate, SumsTheAxis) {
  EXPECT_EQ(run_both(OpId::Concatenate, axis(1), {F32({2, 3}), F32({2, 4}), F32({2, 1})}).shape, "[2, 8]");
  EXPECT_EQ(run(OpId::Concatenate, axis(0), {SF32({N, 3}), SF32({M, 3}), SF32({1, 3})}).shape, "[N+M+1, 3]");
  EXPECT_ERROR_HAS(run_both(OpId::Concatenate, axis(0), {F32({2, 3}), F32({2, 4})}),
                   "concatenate: inputs differ in dimension 1");
  EXPECT_ERROR_HAS(run_both(OpId::Concatenate, axis(0), {F32({2, 3}), F32({2})}), "different ranks");
  EXPECT_ERROR_HAS(run_both(OpId::Concatenate, axis(0), {F32({2}), T(DType::kI32, {2})}), "different dtypes");
  EXPECT_FALSE(run_both(OpId::Concatenate, axis(0), {F32({})}).status.ok());
}

// SPEC §8: dims that must agree, that only the binding can compare, and that no
// binding makes agree: a warning, once per node.
TEST(Concatenate, WarnsWhereNoBindingMatchesANonAxisDim) {
  auto r = run(OpId::Concatenate, axis(1), {SF32({N * SymDim(2), 3}), SF32({5, 3})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.shape, "[5, 6]");
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0], "concatenate: inputs differ in dimension 0, which is not the axis: [N*2, 3] and [5, 3]: "
                           "N*2 and 5 cannot be equal for any N, so this fails at run time for every input");
  // Two inputs the rule does not compare with each other (the result keeps N).
  const SymDim m2 = M * SymDim(2);
  auto pair = run(OpId::Concatenate, axis(0),
                  {SF32({2, N}), SF32({3, m2}), SF32({4, m2}), SF32({1, K * SymDim(2) + SymDim(1)})});
  ASSERT_EQ(pair.warnings.size(), 1u);
  EXPECT_NE(pair.warnings[0].find("[3, M*2] and [1, K*2+1]: M*2 and K*2+1 cannot be equal for any M and K"),
            std::string::npos)
      << pair.warnings[0];
  EXPECT_TRUE(run(OpId::Concatenate, axis(1), {SF32({N * SymDim(2), 3}), SF32({6, 3})}).warnings.empty());
  EXPECT_TRUE(run(OpId::Concatenate, axis(1), {SF32({N, 3}), SF32({M * SymDim(2), 3})}).warnings.empty());
  EXPECT_TRUE(run_both(OpId::Concatenate, axis(1), {F32({2, 3}), F32({2, 4})}).warnings.empty());
}

TEST(Reshape, WarnsWhereNoBindingMatchesTheCounts) {
  // [N, 2] into [M*2+1]: an even count against an odd one.
  auto r = run(OpId::Reshape, shape({-2}), {SF32({N, 2}), kSymI64Scalar}, {std::nullopt, M * SymDim(2) + SymDim(1)});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0], "reshape: cannot reshape [N, 2] (N*2 elements) into [M*2+1] (M*2+1 elements): the counts "
                           "cannot be equal for any N and M, so this fails at run time for every input");
  EXPECT_TRUE(run(OpId::Reshape, shape({-2}), {SF32({N, 2}), kSymI64Scalar}, {std::nullopt, M * SymDim(3)})
                  .warnings.empty());
}

TEST(BroadcastTo, WarnsWhereNoBindingBroadcasts) {
  auto r = run(OpId::BroadcastTo, shape({4, 5}), {SF32({N * SymDim(2) + SymDim(2)})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0], "broadcast_to: cannot broadcast [N*2+2] to [4, 5]: N*2+2 can be neither 5 nor 1 for any N, "
                           "so this fails at run time for every input");
  EXPECT_TRUE(run(OpId::BroadcastTo, shape({4, 6}), {SF32({N * SymDim(2) + SymDim(2)})}).warnings.empty());
  EXPECT_TRUE(run(OpId::BroadcastTo, shape({4, 5}), {SF32({N * SymDim(2) + SymDim(1)})}).warnings.empty());  // N = 2
}

TEST(ExpandDimsAndSqueeze, WarnsWhereNoBindingMakesTheAxisOne) {
  auto r = run(OpId::Squeeze, attrs({Is({0, 1})}), {SF32({N + SymDim(1), M * SymDim(2), 3})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0], "squeeze: cannot squeeze axis 1 of [N+1, M*2, 3]: its size M*2 cannot be 1 for any M, so "
                           "this fails at run time for every input");
  EXPECT_TRUE(run(OpId::Squeeze, attrs({Is({0})}), {SF32({N * M, 3})}).warnings.empty());
}

TEST(Take, GathersAlongAnAxis) {
  auto r = run_both(OpId::Take, axis(1), {F32({5, 7, 3}), T(DType::kI32, {2, 4})});
  EXPECT_EQ(r.shape, "[5, 2, 4, 3]");
  EXPECT_EQ(r.type.dtype, DType::kF32);
  EXPECT_EQ(run_both(OpId::Take, axis(0), {F32({5, 7}), T(DType::kI64, {})}).shape, "[7]");
  EXPECT_EQ(run(OpId::Take, axis(0), {SF32({M, 16}), S(DType::kI64, {N})}).shape, "[N, 16]");
  EXPECT_ERROR_HAS(run_both(OpId::Take, axis(0), {F32({5}), F32({2})}), "take: indices must be i32 or i64");
}

TEST(ShapeDim, IsAnI64Scalar) {
  auto r = run(OpId::ShapeDim, axis(0), {SF32({N, 3})});
  EXPECT_EQ(r.shape, "[]");
  EXPECT_EQ(r.type.dtype, DType::kI64);
  EXPECT_FALSE(run_both(OpId::ShapeDim, axis(2), {F32({2, 3})}).status.ok());
}

}  // namespace
}  // namespace sg::ops
