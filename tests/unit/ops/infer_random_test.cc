// random(key, dims...): the key's type, the result's shape and dtype per distribution.
#include <gtest/gtest.h>

#include "ops/rule_tester.h"

namespace sg::ops {
namespace {

using namespace testing;
using namespace attr;

Attrs rnd(std::vector<int64_t> shape, int64_t dist) { return attrs({Is(std::move(shape)), I(dist)}); }
const TensorType<int64_t> kKey = T(DType::kI64, {2});

TEST(Random, ShapeAndDtypePerDistribution) {
  EXPECT_EQ(run_both(OpId::Random, rnd({3, 4}, kUniform), {kKey}).type, F32({3, 4}));
  EXPECT_EQ(run_both(OpId::Random, rnd({5}, kNormal), {kKey}).type, F32({5}));
  EXPECT_EQ(run_both(OpId::Random, rnd({}, kGumbel), {kKey}).type, F32({}));
  EXPECT_EQ(run_both(OpId::Random, rnd({7}, kBits), {kKey}).type, T(DType::kI64, {7}));
  EXPECT_EQ(run_both(OpId::Random, rnd({3}, kKeys), {kKey}).type, T(DType::kI64, {3, 2}));
  EXPECT_EQ(run_both(OpId::Random, rnd({0}, kUniform), {kKey}).type, F32({0}));
}

TEST(Random, DynamicDims) {
  const Inferred<int64_t> r =
      run_both(OpId::Random, rnd({kDynamicDim, 4}, kNormal), {kKey, T(DType::kI64, {})}, {std::nullopt, std::optional<int64_t>(6)});
  EXPECT_EQ(r.type, F32({6, 4}));
  const Inferred<SymDim> s =
      run(OpId::Random, rnd({kDynamicDim}, kUniform), {S(DType::kI64, {2}), S(DType::kI64, {})}, {std::nullopt, std::optional(N)});
  EXPECT_EQ(s.shape, "[N]");
}

TEST(Random, BadKeysAndAttributes) {
  EXPECT_ERROR_HAS(run_both(OpId::Random, rnd({3}, kUniform), {T(DType::kI32, {2})}),
                   "random: the key must be an i64[2] tensor");
  EXPECT_ERROR_HAS(run_both(OpId::Random, rnd({3}, kUniform), {T(DType::kI64, {3})}),
                   "random: the key must be an i64[2] tensor");
  EXPECT_ERROR_HAS(run_both(OpId::Random, rnd({3}, 5), {kKey}), "random: distribution must be in [0, 4], got 5");
  EXPECT_ERROR_HAS(run_both(OpId::Random, rnd({-1}, kUniform), {kKey}), "random: invalid shape entry -1");
  EXPECT_ERROR_HAS(run_both(OpId::Random, rnd({kDynamicDim}, kUniform), {kKey}),
                   "random: expects 1 dynamic scalar inputs, got 0");
  EXPECT_ERROR_HAS(run_both(OpId::Random, attrs({Is({3})}), {kKey}), "random: expects 2 attributes, got 1");
}

}  // namespace
}  // namespace sg::ops

namespace sg::ops {
namespace {

using namespace testing;
using namespace attr;

Attrs custom(std::vector<int64_t> shape, DType t, std::string name, int64_t operands) {
  return attrs({Is(std::move(shape)), I(int64_t(t)), Str(std::move(name)), I(operands)});
}

// custom(operands..., dims...): the recorded type, dynamic dims after the operands.
TEST(Custom, RecordedTypeWithDynamicDims) {
  EXPECT_EQ(run_both(OpId::Custom, custom({2, 3}, DType::kI32, "a.b", 1), {F32({7})}).type, T(DType::kI32, {2, 3}));
  EXPECT_EQ(run_both(OpId::Custom, custom({}, DType::kF32, "a.b", 0), {}).type, F32({}));
  const Inferred<int64_t> r = run_both(OpId::Custom, custom({kDynamicDim, 3}, DType::kF32, "a.b", 2),
                                       {F32({5, 3}), F32({1}), T(DType::kI64, {})}, {std::nullopt, std::nullopt, 5});
  EXPECT_EQ(r.type, F32({5, 3}));
  const Inferred<SymDim> s = run(OpId::Custom, custom({kDynamicDim, 3}, DType::kF32, "a.b", 1),
                                 {SF32({N, 3}), S(DType::kI64, {})}, {std::nullopt, std::optional(N)});
  EXPECT_EQ(s.shape, "[N, 3]");
}

TEST(Custom, BadAttributes) {
  EXPECT_ERROR_HAS(run_both(OpId::Custom, custom({2}, DType::kF32, "", 1), {F32({2})}), "custom: the name must not be empty");
  EXPECT_ERROR_HAS(run_both(OpId::Custom, custom({2}, DType::kF32, "a.b", 2), {F32({2})}),
                   "custom: operands must be in [0, 1], got 2");
  EXPECT_ERROR_HAS(run_both(OpId::Custom, custom({kDynamicDim}, DType::kF32, "a.b", 1), {F32({2})}),
                   "custom: expects 1 dynamic scalar inputs, got 0");
  EXPECT_ERROR_HAS(run_both(OpId::Custom, custom({2}, DType(9), "a.b", 1), {F32({2})}), "custom: invalid dtype 9");
  EXPECT_ERROR_HAS(run_both(OpId::Custom, custom({-3}, DType::kF32, "a.b", 1), {F32({2})}),
                   "custom: invalid shape entry -3");
}

}  // namespace
}  // namespace sg::ops
