// Reductions and matmul.
#include <gtest/gtest.h>

#include "ops/rule_tester.h"

namespace sg::ops {
namespace {

using namespace testing;
const Attrs kNoAttrs;

Attrs reduce(std::vector<int64_t> axes, bool keepdims = false) { return attrs({Is(std::move(axes)), I(keepdims)}); }
Attrs arg(int64_t axis, bool keepdims = false) { return attrs({I(axis), I(keepdims)}); }

TEST(Reduce, DropsOrKeepsAxes) {
  EXPECT_EQ(run_both(OpId::Sum, reduce({1}), {F32({2, 3, 4})}).shape, "[2, 4]");
  EXPECT_EQ(run_both(OpId::Sum, reduce({0, 2}, true), {F32({2, 3, 4})}).shape, "[1, 3, 1]");
  EXPECT_EQ(run_both(OpId::Mean, reduce({0, 1, 2}), {F32({2, 3, 4})}).shape, "[]");
  EXPECT_EQ(run_both(OpId::Max, reduce({}), {F32({2, 3})}).shape, "[2, 3]");  // axis=()
  EXPECT_EQ(run(OpId::Sum, reduce({1}), {SF32({N, 784})}).shape, "[N]");
}

TEST(Reduce, Dtypes) {
  EXPECT_EQ(run_both(OpId::Sum, reduce({0}), {T(DType::kBool, {3})}).type.dtype, DType::kI64);
  EXPECT_EQ(run_both(OpId::Sum, reduce({0}), {T(DType::kI32, {3})}).type.dtype, DType::kI64);
  EXPECT_EQ(run_both(OpId::Prod, reduce({0}), {F32({3})}).type.dtype, DType::kF32);
  EXPECT_EQ(run_both(OpId::Mean, reduce({0}), {T(DType::kI32, {3})}).type.dtype, DType::kF32);
  EXPECT_EQ(run_both(OpId::Min, reduce({0}), {T(DType::kI32, {3})}).type.dtype, DType::kI32);
  EXPECT_EQ(run_both(OpId::Any, reduce({0}), {F32({3})}).type.dtype, DType::kBool);
  EXPECT_EQ(run_both(OpId::ArgMax, arg(0), {T(DType::kI32, {3})}).type.dtype, DType::kI64);
}

TEST(Reduce, ZeroSizeAxisHasNoMaximum) {
  EXPECT_ERROR_HAS(run_both(OpId::Max, reduce({0}), {F32({0, 3})}), "max: zero-size reduction axis");
  EXPECT_ERROR_HAS(run_both(OpId::ArgMin, arg(1), {F32({3, 0})}), "argmin: zero-size reduction axis");
  EXPECT_TRUE(run_both(OpId::Sum, reduce({0}), {F32({0, 3})}).status.ok());
  EXPECT_TRUE(run_both(OpId::Max, reduce({1}), {F32({0, 3})}).status.ok());
}

TEST(Reduce, WarnsOverAnAxisOfSizeOne) {
  auto r = run_both(OpId::Sum, reduce({1}), {F32({4, 1})});
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("sum over an axis of size 1 does nothing; did you mean another axis?"),
            std::string::npos);
  auto a = run(OpId::ArgMax, arg(1), {SF32({N, 1})});
  ASSERT_EQ(a.warnings.size(), 1u);
  EXPECT_NE(a.warnings[0].find("argmax over an axis of size 1 always gives 0"), std::string::npos);
  // Reducing everything of a [1, 10] tensor is fine.
  EXPECT_TRUE(run_both(OpId::Sum, reduce({0, 1}), {F32({1, 10})}).warnings.empty());
  EXPECT_TRUE(run(OpId::Sum, reduce({0}), {SF32({N, 1})}).warnings.empty());
}

TEST(ArgReduce, OneAxis) {
  EXPECT_EQ(run_both(OpId::ArgMax, arg(1), {F32({2, 3, 4})}).shape, "[2, 4]");
  EXPECT_EQ(run_both(OpId::ArgMin, arg(2, true), {F32({2, 3, 4})}).shape, "[2, 3, 1]");
  EXPECT_EQ(run(OpId::ArgMax, arg(1), {SF32({N, 10})}).shape, "[N]");
}

TEST(MatMul, TwoDimensional) {
  auto r = run_both(OpId::MatMul, kNoAttrs, {F32({2, 3}), F32({3, 5})});
  EXPECT_EQ(r.shape, "[2, 5]");
  EXPECT_EQ(r.type.dtype, DType::kF32);
  EXPECT_ERROR_HAS(run_both(OpId::MatMul, kNoAttrs, {F32({2, 3}), F32({4, 5})}),
                   "matmul: inner dimensions differ: [2, 3] @ [4, 5]");
}

TEST(MatMul, OneDimensionalOperandsArePromoted) {
  EXPECT_EQ(run_both(OpId::MatMul, kNoAttrs, {F32({3}), F32({3, 5})}).shape, "[5]");
  EXPECT_EQ(run_both(OpId::MatMul, kNoAttrs, {F32({2, 3}), F32({3})}).shape, "[2]");
  EXPECT_EQ(run_both(OpId::MatMul, kNoAttrs, {F32({3}), F32({3})}).shape, "[]");
  EXPECT_EQ(run_both(OpId::MatMul, kNoAttrs, {F32({7, 2, 3}), F32({3})}).shape, "[7, 2]");
  EXPECT_ERROR_HAS(run_both(OpId::MatMul, kNoAttrs, {F32({3}), F32({4})}), "inner dimensions differ: [3] @ [4]");
  EXPECT_ERROR_HAS(run_both(OpId::MatMul, kNoAttrs, {F32({}), F32({4})}), "at least one dimension");
}

TEST(MatMul, BatchDimsBroadcast) {
  EXPECT_EQ(run_both(OpId::MatMul, kNoAttrs, {F32({4, 1, 2, 3}), F32({5, 3, 6})}).shape, "[4, 5, 2, 6]");
  EXPECT_EQ(run_both(OpId::MatMul, kNoAttrs, {F32({2, 3}), F32({8, 3, 6})}).shape, "[8, 2, 6]");
  EXPECT_ERROR_HAS(run_both(OpId::MatMul, kNoAttrs, {F32({2, 2, 3}), F32({5, 3, 6})}),
                   "matmul: cannot broadcast the batch dims");
}

TEST(MatMul, Dtypes) {
  EXPECT_ERROR_HAS(run_both(OpId::MatMul, kNoAttrs, {F32({2, 3}), T(DType::kF16, {3, 5})}), "different dtypes");
  EXPECT_ERROR_HAS(run_both(OpId::MatMul, kNoAttrs, {T(DType::kBool, {2, 3}), T(DType::kBool, {3, 5})}), "bool");
  EXPECT_EQ(run_both(OpId::MatMul, kNoAttrs, {T(DType::kI32, {2, 3}), T(DType::kI32, {3, 5})}).type.dtype,
            DType::kI32);
}

TEST(MatMul, SymbolicDims) {
  auto r = run(OpId::MatMul, kNoAttrs, {SF32({N, 784}), SF32({784, 512})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.shape, "[N, 512]");
  EXPECT_EQ(run(OpId::MatMul, kNoAttrs, {SF32({N, K}), SF32({K, M})}).shape, "[N, M]");
  EXPECT_TRUE(run(OpId::MatMul, kNoAttrs, {SF32({N, K}), SF32({M, 3})}).status.ok());  // run time decides
  EXPECT_ERROR_HAS(run(OpId::MatMul, kNoAttrs, {SF32({N, K}), SF32({K + SymDim(1), 3})}),
                   "matmul: inner dimensions differ: [N, K] @ [K+1, 3]");
}

// SPEC §8: inner dims that only the binding can compare but that no binding makes
// equal (4 against N*3) fail for every input: a warning, once per node.
TEST(MatMul, WarnsWhereNoBindingMatchesTheInnerDims) {
  auto r = run(OpId::MatMul, kNoAttrs, {SF32({N, 4}), SF32({N * SymDim(3), 2})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.shape, "[N, 2]");
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0], "matmul: inner dimensions 4 and N*3 of [N, 4] @ [N*3, 2] cannot be equal for any N, so "
                           "this fails at run time for every input");
  auto two = run(OpId::MatMul, kNoAttrs, {SF32({N, M * SymDim(2)}), SF32({K * SymDim(4) + SymDim(1), 3})});
  ASSERT_EQ(two.warnings.size(), 1u);
  EXPECT_EQ(two.warnings[0], "matmul: inner dimensions M*2 and K*4+1 of [N, M*2] @ [K*4+1, 3] cannot be equal for "
                             "any M and K, so this fails at run time for every input");
  // The existing empty-only warning keeps its words, and a node warns once.
  auto empty = run(OpId::MatMul, kNoAttrs, {SF32({2, N, N * SymDim(2)}), SF32({M * SymDim(2) + SymDim(3), N, 3})});
  ASSERT_EQ(empty.warnings.size(), 1u);
  EXPECT_NE(empty.warnings[0].find("are equal only when both are 0"), std::string::npos) << empty.warnings[0];
  // Batch dims broadcast: N*2 is neither 3 nor 1.
  auto batch = run(OpId::MatMul, kNoAttrs, {SF32({N * SymDim(2), 2, 4}), SF32({3, 4, 5})});
  ASSERT_EQ(batch.warnings.size(), 1u);
  EXPECT_EQ(batch.warnings[0], "matmul: cannot broadcast the batch dims of [N*2, 2, 4] @ [3, 4, 5]: N*2 can be "
                               "neither 3 nor 1 for any N, so this fails at run time for every input");
}

TEST(MatMul, NoWarningWhereSomeBindingMatchesTheInnerDims) {
  for (const SymDim& k : {N * SymDim(2), M, N * M, N + M, N * N, M * SymDim(2) + SymDim(2)}) {
    auto r = run(OpId::MatMul, kNoAttrs, {SF32({N, 4}), SF32({k, 2})});
    ASSERT_TRUE(r.status.ok());
    EXPECT_TRUE(r.warnings.empty()) << r.warnings[0];
  }
  EXPECT_TRUE(run(OpId::MatMul, kNoAttrs, {SF32({N, 6}), SF32({N * SymDim(3), 2})}).warnings.empty());  // N = 2
  EXPECT_TRUE(run(OpId::MatMul, kNoAttrs, {SF32({N, 2, 4}), SF32({M * SymDim(2), 4, 5})}).warnings.empty());
  EXPECT_TRUE(run_both(OpId::MatMul, kNoAttrs, {F32({2, 3}), F32({3, 5})}).warnings.empty());
}

}  // namespace
}  // namespace sg::ops
