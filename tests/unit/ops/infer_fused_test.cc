// Rules of fully_connected and conv2d_bias: their core's rule, then the bias; of
// elementwise_chain: its steps' rules, then one shape for every step.
#include <gtest/gtest.h>

#include "ops/rule_tester.h"

namespace sg::ops {
namespace {

using namespace testing;

TEST(FullyConnected, MatmulShapeWithAChannelBias) {
  EXPECT_EQ(run_both(OpId::FullyConnected, attrs({I(1)}), {F32({4, 784}), F32({784, 512}), F32({512})}).shape,
            "[4, 512]");
  EXPECT_EQ(run_both(OpId::FullyConnected, attrs({I(0)}), {F32({2, 3, 5}), F32({5, 7}), F32({7})}).shape,
            "[2, 3, 7]");
  EXPECT_EQ(run(OpId::FullyConnected, attrs({I(1)}), {SF32({N, 8}), SF32({8, 3}), SF32({3})}).type.shape.size(), 2u);
  EXPECT_ERROR_HAS(run_both(OpId::FullyConnected, attrs({I(0)}), {F32({4, 5}), F32({5, 3}), F32({4})}),
                   "fully_connected: bias must be f32[3], got f32[4]");
  EXPECT_ERROR_HAS(run_both(OpId::FullyConnected, attrs({I(0)}), {F32({4, 5}), F32({6, 3}), F32({3})}),
                   "inner dimensions differ");
  EXPECT_ERROR_HAS(run_both(OpId::FullyConnected, attrs({I(0)}), {F32({4, 5}), F32({2, 5, 3}), F32({3})}),
                   "w of rank 2");
  EXPECT_ERROR_HAS(run_both(OpId::FullyConnected, attrs({I(0)}), {T(DType::kI32, {4, 5}), T(DType::kI32, {5, 3}),
                                                                  T(DType::kI32, {3})}),
                   "operands must be f32");
  EXPECT_TRUE(run_both(OpId::FullyConnected, attrs({I(2)}), {F32({4, 5}), F32({5, 3}), F32({3})}).status.ok());
  EXPECT_FALSE(run_both(OpId::FullyConnected, attrs({I(3)}), {F32({4, 5}), F32({5, 3}), F32({3})}).status.ok());
  EXPECT_FALSE(run_both(OpId::FullyConnected, attrs({I(-1)}), {F32({4, 5}), F32({5, 3}), F32({3})}).status.ok());
}

TEST(Conv2DBias, ConvShapeWithAChannelBias) {
  const Attrs a = attrs({Is({1, 1}), Is({1, 1}), Str("SAME"), I(1), I(1)});
  EXPECT_EQ(run_both(OpId::Conv2DBias, a, {F32({2, 28, 28, 3}), F32({5, 5, 3, 16}), F32({16})}).shape,
            "[2, 28, 28, 16]");
  EXPECT_ERROR_HAS(run_both(OpId::Conv2DBias, a, {F32({2, 28, 28, 3}), F32({5, 5, 3, 16}), F32({3})}),
                   "conv2d_bias: bias must be f32[16]");
  EXPECT_FALSE(run_both(OpId::Conv2DBias, attrs({Is({1, 1}), Is({1, 1}), Str("SAME"), I(1), I(-1)}),
                        {F32({2, 28, 28, 3}), F32({5, 5, 3, 16}), F32({16})})
                   .status.ok());
}


// steps as (op, a, b) triples.
Attrs chain(std::vector<int64_t> steps) { return attrs({Is(std::move(steps))}); }
constexpr int64_t kAdd = int64_t(OpId::Add), kMul = int64_t(OpId::Mul), kTanh = int64_t(OpId::Tanh);

TEST(ElementwiseChain, TheStepsShapeWithScalarOperands) {
  // tanh(x * s + y)
  const Attrs a = chain({kMul, 0, 1, kAdd, 3, 2, kTanh, 4, -1});
  EXPECT_EQ(run_both(OpId::ElementwiseChain, a, {F32({4, 8}), F32({}), F32({4, 8})}).shape, "[4, 8]");
  EXPECT_EQ(run_both(OpId::ElementwiseChain, a, {F32({4, 8}), F32({1, 1}), F32({4, 8})}).shape, "[4, 8]");
  EXPECT_EQ(run(OpId::ElementwiseChain, a, {SF32({N, 8}), SF32({}), SF32({N, 8})}).type.shape.size(), 2u);
  // A step's own rule: the broadcast fails.
  EXPECT_ERROR_HAS(run_both(OpId::ElementwiseChain, a, {F32({4, 8}), F32({}), F32({4, 5})}), "add:");
  // A step that broadcasts beyond an operand, or an operand that is neither the
  // result's shape nor one element, needs more than one pass.
  EXPECT_ERROR_HAS(run_both(OpId::ElementwiseChain, a, {F32({4, 1}), F32({}), F32({4, 8})}),
                   "elementwise_chain: input 0 is [4, 1], neither the result's shape [4, 8] nor one element");
  EXPECT_ERROR_HAS(run_both(OpId::ElementwiseChain, chain({kMul, 1, 1, kAdd, 0, 2}), {F32({4, 8}), F32({})}),
                   "elementwise_chain: step 0 is [], neither the result's shape [4, 8]");
  EXPECT_ERROR_HAS(run_both(OpId::ElementwiseChain, a, {T(DType::kI32, {4, 8}), F32({}), F32({4, 8})}),
                   "elementwise_chain: input 0 must be f32, got i32");
}

TEST(ElementwiseChain, EveryOutputHasTheResultsType) {
  // x * s, then tanh of it plus y: both results are outputs
  const Attrs a = attrs({Is({kMul, 0, 1, kAdd, 3, 2, kTanh, 4, -1}), Is({0, 2})});
  const auto r = run_both(OpId::ElementwiseChain, a, {F32({4, 8}), F32({}), F32({4, 8})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.shapes, (std::vector<std::string>{"[4, 8]", "[4, 8]"}));
  for (const auto& o : r.outputs) EXPECT_EQ(o.dtype, DType::kF32);
}

}  // namespace
}  // namespace sg::ops
