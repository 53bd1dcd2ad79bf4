// cumprod and searchsorted: shapes, dtypes (SPEC §3) and their errors.
#include <gtest/gtest.h>

#include "ops/rule_tester.h"

namespace sg::ops {
namespace {

using namespace testing;

TEST(CumProd, KeepsTheShapeAndWidensSmallIntsAsProd) {
  EXPECT_EQ(run_both(OpId::CumProd, attrs({I(1)}), {F32({2, 3})}).shape, "[2, 3]");
  EXPECT_EQ(run_both(OpId::CumProd, attrs({I(0)}), {T(DType::kBool, {4})}).type.dtype, DType::kI64);
  EXPECT_EQ(run_both(OpId::CumProd, attrs({I(0)}), {T(DType::kI32, {4})}).type.dtype, DType::kI64);
  EXPECT_EQ(run_both(OpId::CumProd, attrs({I(0)}), {T(DType::kF16, {4})}).type.dtype, DType::kF16);
  EXPECT_EQ(run(OpId::CumProd, attrs({I(1)}), {SF32({N, M})}).shape, "[N, M]");
  EXPECT_FALSE(run_both(OpId::CumProd, attrs({I(2)}), {F32({2, 3})}).status.ok());
}

TEST(SearchSorted, OneI64PositionPerValue) {
  for (DType t : {DType::kF32, DType::kF16, DType::kI32, DType::kI64, DType::kBool})
    EXPECT_EQ(run_both(OpId::SearchSorted, attrs({I(0)}), {T(t, {5}), T(t, {2, 3})}).type, T(DType::kI64, {2, 3}));
  EXPECT_EQ(run_both(OpId::SearchSorted, attrs({I(1)}), {F32({5}), F32({})}).shape, "[]");
  EXPECT_EQ(run(OpId::SearchSorted, attrs({I(1)}), {SF32({N}), SF32({M, K})}).shape, "[M, K]");
}

TEST(SearchSorted, RefusesBadOperands) {
  const auto two_d = run_both(OpId::SearchSorted, attrs({I(0)}), {F32({2, 2}), F32({3})});
  EXPECT_NE(two_d.status.message().find("searchsorted: the sorted sequence must be 1-D, got [2, 2]"), std::string::npos)
      << two_d.status.message();
  const auto mixed = run_both(OpId::SearchSorted, attrs({I(0)}), {F32({2}), T(DType::kI64, {3})});
  EXPECT_NE(mixed.status.message().find("cast with astype"), std::string::npos) << mixed.status.message();
  EXPECT_FALSE(run_both(OpId::SearchSorted, attrs({I(2)}), {F32({2}), F32({3})}).status.ok());
}

}  // namespace
}  // namespace sg::ops
