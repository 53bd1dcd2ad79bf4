// cumsum, sort, argsort, topk: shapes, dtypes (SPEC §3) and topk's k.
#include <gtest/gtest.h>

#include "ops/rule_tester.h"

namespace sg::ops {
namespace {

using namespace testing;

Attrs axis(int64_t a) { return attrs({I(a)}); }
Attrs topk(int64_t k, int64_t a) { return attrs({I(k), I(a)}); }

TEST(CumSum, KeepsTheShapeAndWidensSmallInts) {
  EXPECT_EQ(run_both(OpId::CumSum, axis(1), {F32({2, 3})}).shape, "[2, 3]");
  EXPECT_EQ(run_both(OpId::CumSum, axis(0), {T(DType::kBool, {4})}).type.dtype, DType::kI64);
  EXPECT_EQ(run_both(OpId::CumSum, axis(0), {T(DType::kI32, {4})}).type.dtype, DType::kI64);
  EXPECT_EQ(run_both(OpId::CumSum, axis(0), {T(DType::kI64, {4})}).type.dtype, DType::kI64);
  EXPECT_EQ(run_both(OpId::CumSum, axis(0), {T(DType::kF16, {4})}).type.dtype, DType::kF16);
  EXPECT_EQ(run(OpId::CumSum, axis(0), {SF32({N, M})}).shape, "[N, M]");
  EXPECT_EQ(reduction_result_dtype(OpId::CumSum, DType::kBool), DType::kI64);
  // axis=None is lowered to a reshape first; a 0-d input has no axis.
  EXPECT_EQ(run_both(OpId::CumSum, axis(0), {F32({})}).status.code(), StatusCode::kInvalidGraph);
}

TEST(Sort, ValuesKeepTheirDtypeAndPositionsAreI64) {
  for (DType t : {DType::kF32, DType::kF16, DType::kI32, DType::kI64, DType::kBool}) {
    EXPECT_EQ(run_both(OpId::Sort, axis(0), {T(t, {5, 2})}).type, T(t, {5, 2}));
    EXPECT_EQ(run_both(OpId::ArgSort, axis(1), {T(t, {5, 2})}).type, T(DType::kI64, {5, 2}));
  }
  EXPECT_EQ(run(OpId::ArgSort, axis(0), {SF32({N})}).shape, "[N]");
  EXPECT_FALSE(run_both(OpId::Sort, axis(2), {F32({5, 2})}).status.ok());
}

TEST(TopK, TwoOutputsWithKAlongTheAxis) {
  auto r = run_both(OpId::TopK, topk(2, 1), {T(DType::kI32, {3, 5, 4})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.outputs.size(), 2u);
  EXPECT_EQ(r.outputs[0], T(DType::kI32, {3, 2, 4}));
  EXPECT_EQ(r.outputs[1], T(DType::kI64, {3, 2, 4}));
  EXPECT_EQ(run_both(OpId::TopK, topk(0, 0), {F32({3})}).shapes, (std::vector<std::string>{"[0]", "[0]"}));
  EXPECT_EQ(run_both(OpId::TopK, topk(3, 0), {F32({3})}).shapes, (std::vector<std::string>{"[3]", "[3]"}));
}

TEST(TopK, KLargerThanTheAxisIsAnError) {
  EXPECT_ERROR_HAS(run_both(OpId::TopK, topk(5, 1), {F32({2, 3})}),
                   "topk: k = 5 is larger than the size 3 of axis 1 of [2, 3]");
  EXPECT_EQ(run_both(OpId::TopK, topk(5, 1), {F32({2, 3})}).status.code(), StatusCode::kRuntimeError);
  // A symbolic axis is left to the run-time rule.
  auto r = run(OpId::TopK, topk(5, 0), {SF32({N, 3})});
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(r.shapes, (std::vector<std::string>{"[5, 3]", "[5, 3]"}));
  EXPECT_EQ(run(OpId::TopK, topk(4, 1), {SF32({N, 3})}).status.code(), StatusCode::kRuntimeError);
  EXPECT_EQ(run_both(OpId::TopK, topk(-1, 0), {F32({3})}).status.code(), StatusCode::kInvalidGraph);
}

}  // namespace
}  // namespace sg::ops
