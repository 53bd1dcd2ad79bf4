// softmax, log_softmax, conv2d, max_pool2d, avg_pool2d, layer_norm.
#include <gtest/gtest.h>

#include <cmath>

#include "ops/rule_tester.h"

namespace sg::ops {
namespace {

using namespace testing;

Attrs conv(std::vector<int64_t> stride, const char* padding, std::vector<int64_t> dilation = {1, 1},
           int64_t groups = 1) {
  return attrs({Is(std::move(stride)), Is(std::move(dilation)), Str(padding), I(groups)});
}
Attrs pool(std::vector<int64_t> size, std::vector<int64_t> stride, const char* padding) {
  return attrs({Is(std::move(size)), Is(std::move(stride)), Str(padding)});
}

TEST(Softmax, FloatsOnly) {
  EXPECT_EQ(run_both(OpId::Softmax, attrs({I(1)}), {F32({2, 5})}).shape, "[2, 5]");
  EXPECT_EQ(run_both(OpId::LogSoftmax, attrs({I(0)}), {T(DType::kF16, {3})}).type.dtype, DType::kF16);
  EXPECT_ERROR_HAS(run_both(OpId::Softmax, attrs({I(0)}), {T(DType::kI32, {3})}), "softmax: needs a float input");
  EXPECT_FALSE(run_both(OpId::Softmax, attrs({I(0)}), {F32({})}).status.ok());
}

TEST(Softmax, WarnsOverAnAxisOfSizeOne) {
  auto r = run(OpId::Softmax, attrs({I(1)}), {SF32({N, 1})});
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("softmax over an axis of size 1 is always 1"), std::string::npos);
  EXPECT_TRUE(run(OpId::Softmax, attrs({I(0)}), {SF32({N, 1})}).warnings.empty());
}

TEST(Conv2D, ValidAndSame) {
  const auto x = F32({2, 28, 28, 3});
  const auto w = F32({5, 5, 3, 16});
  EXPECT_EQ(run_both(OpId::Conv2D, conv({1, 1}, "VALID"), {x, w}).shape, "[2, 24, 24, 16]");
  EXPECT_EQ(run_both(OpId::Conv2D, conv({1, 1}, "SAME"), {x, w}).shape, "[2, 28, 28, 16]");
  EXPECT_EQ(run_both(OpId::Conv2D, conv({2, 2}, "VALID"), {x, w}).shape, "[2, 12, 12, 16]");
  EXPECT_EQ(run_both(OpId::Conv2D, conv({2, 3}, "SAME"), {x, w}).shape, "[2, 14, 10, 16]");
  EXPECT_EQ(run_both(OpId::Conv2D, conv({1, 1}, "VALID", {2, 2}), {x, w}).shape, "[2, 20, 20, 16]");
}

TEST(Conv2D, Groups) {
  EXPECT_EQ(run_both(OpId::Conv2D, conv({1, 1}, "SAME", {1, 1}, 4), {F32({1, 8, 8, 8}), F32({3, 3, 2, 4})}).shape,
            "[1, 8, 8, 4]");
  EXPECT_ERROR_HAS(run_both(OpId::Conv2D, conv({1, 1}, "SAME", {1, 1}, 2), {F32({1, 8, 8, 8}), F32({3, 3, 4, 3})}),
                   "not divisible by groups 2");
  EXPECT_ERROR_HAS(run_both(OpId::Conv2D, conv({1, 1}, "SAME"), {F32({1, 8, 8, 3}), F32({3, 3, 4, 8})}),
                   "conv2d: input channels do not match the filter");
}

TEST(Conv2D, BadOperands) {
  EXPECT_ERROR_HAS(run_both(OpId::Conv2D, conv({1, 1}, "VALID"), {F32({1, 3, 3, 1}), F32({5, 5, 1, 1})}),
                   "larger than the input");
  EXPECT_ERROR_HAS(run_both(OpId::Conv2D, conv({1, 1}, "VALID"), {F32({3, 3, 1}), F32({1, 1, 1, 1})}),
                   "input must be rank 4 (NHWC)");
  EXPECT_ERROR_HAS(run_both(OpId::Conv2D, conv({1, 1}, "VALID"),
                            {T(DType::kI32, {1, 3, 3, 1}), T(DType::kI32, {1, 1, 1, 1})}),
                   "must be float");
  EXPECT_ERROR_HAS(run_both(OpId::Conv2D, conv({1, 1}, "VALID"), {F32({1, 3, 3, 1}), T(DType::kF16, {1, 1, 1, 1})}),
                   "different dtypes");
}

TEST(Conv2D, SymbolicDims) {
  const auto w = SF32({3, 3, 3, 8});
  EXPECT_EQ(run(OpId::Conv2D, conv({1, 1}, "VALID"), {SF32({N, 32, 32, 3}), w}).shape, "[N, 30, 30, 8]");
  EXPECT_EQ(run(OpId::Conv2D, conv({1, 1}, "VALID"), {SF32({N, M, K, 3}), w}).shape, "[N, M-2, K-2, 8]");
  EXPECT_EQ(run(OpId::Conv2D, conv({1, 1}, "SAME"), {SF32({N, M, K, 3}), w}).shape, "[N, M, K, 8]");
  auto strided = run(OpId::Conv2D, conv({2, 2}, "SAME"), {SF32({N, M, M * SymDim(2), 3}), w});
  ASSERT_TRUE(strided.status.ok());
  EXPECT_EQ(strided.fresh, 1);  // ceil(M/2); M*2/2 is exact
  EXPECT_EQ(strided.shape, "[N, F0, M, 8]");
  EXPECT_ERROR_HAS(run(OpId::Conv2D, conv({1, 1}, "VALID"), {SF32({N, 8, 8, 4}), w}), "input channels");
}

// SPEC §8: channels that only the binding can compare and no binding matches.
TEST(Conv2D, WarnsWhereNoBindingMatchesTheChannels) {
  const auto w = SF32({3, 3, 3, 8});
  auto r = run(OpId::Conv2D, conv({1, 1}, "SAME"), {SF32({N, 8, 8, M * SymDim(2)}), w});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0], "conv2d: input channels do not match the filter: [N, 8, 8, M*2] with filter [3, 3, 3, 8] "
                           "and groups 1 needs 3 input channels, and M*2 cannot be 3 for any M, so this fails at run "
                           "time for every input");
  auto grouped =
      run(OpId::Conv2D, conv({1, 1}, "SAME", {1, 1}, 2), {SF32({N, 8, 8, 6}), SF32({3, 3, M * SymDim(2), 8})});
  ASSERT_EQ(grouped.warnings.size(), 1u);
  EXPECT_NE(grouped.warnings[0].find("needs M*4 input channels, and 6 cannot be M*4 for any M"), std::string::npos)
      << grouped.warnings[0];
  EXPECT_TRUE(run(OpId::Conv2D, conv({1, 1}, "SAME"), {SF32({N, 8, 8, M * SymDim(3)}), w}).warnings.empty());
  EXPECT_TRUE(run(OpId::Conv2D, conv({1, 1}, "SAME"), {SF32({N, 8, 8, K}), w}).warnings.empty());
}

TEST(Pool2D, ValidAndSame) {
  EXPECT_EQ(run_both(OpId::MaxPool2D, pool({2, 2}, {2, 2}, "VALID"), {F32({1, 28, 28, 16})}).shape, "[1, 14, 14, 16]");
  EXPECT_EQ(run_both(OpId::AvgPool2D, pool({3, 3}, {2, 2}, "VALID"), {F32({1, 7, 7, 4})}).shape, "[1, 3, 3, 4]");
  EXPECT_EQ(run_both(OpId::AvgPool2D, pool({3, 3}, {2, 2}, "SAME"), {F32({1, 7, 7, 4})}).shape, "[1, 4, 4, 4]");
  EXPECT_EQ(run(OpId::MaxPool2D, pool({2, 2}, {2, 2}, "VALID"), {SF32({N, 28, 28, 16})}).shape, "[N, 14, 14, 16]");
  EXPECT_ERROR_HAS(run_both(OpId::MaxPool2D, pool({2, 2}, {2, 2}, "VALID"), {T(DType::kI32, {1, 4, 4, 1})}),
                   "max_pool2d: input must be float");
  EXPECT_ERROR_HAS(run_both(OpId::MaxPool2D, pool({5, 5}, {1, 1}, "VALID"), {F32({1, 4, 4, 1})}),
                   "larger than the input");
}

TEST(LayerNorm, GammaAndBetaScaleTheLastAxis) {
  const Attrs a = attrs({Fl(1e-5)});
  EXPECT_EQ(run_both(OpId::LayerNorm, a, {F32({2, 3, 8}), F32({8}), F32({8})}).type, F32({2, 3, 8}));
  EXPECT_EQ(run_both(OpId::LayerNorm, a, {F32({8}), F32({1}), F32({})}).type, F32({8}));
  const auto h = [](std::vector<int64_t> s) { return T(DType::kF16, std::move(s)); };
  EXPECT_EQ(run_both(OpId::LayerNorm, a, {h({4, 6}), h({6}), h({6})}).type, h({4, 6}));
  EXPECT_EQ(run(OpId::LayerNorm, a, {SF32({N, M}), SF32({M}), SF32({M})}).shape, "[N, M]");
  EXPECT_TRUE(run(OpId::LayerNorm, a, {SF32({N, M}), SF32({K}), SF32({1})}).status.ok());  // checked at run time
}

// gamma must be [d] or [1] for the last dim d: [N*2] against 5 can be neither.
TEST(LayerNorm, WarnsWhereNoBindingMatchesAParameter) {
  const Attrs a = attrs({Fl(1e-5)});
  auto r = run(OpId::LayerNorm, a, {SF32({M, 5}), SF32({N * SymDim(2)}), SF32({N * SymDim(2)})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.warnings.size(), 1u);  // gamma's; beta's would say the same
  EXPECT_EQ(r.warnings[0], "layer_norm: gamma [N*2] does not match the last dim of [M, 5] (it must be [5], [1] or a "
                           "scalar): N*2 can be neither 5 nor 1 for any N, so this fails at run time for every input");
  EXPECT_TRUE(run(OpId::LayerNorm, a, {SF32({M, 6}), SF32({N * SymDim(2)}), SF32({6})}).warnings.empty());
  EXPECT_TRUE(run(OpId::LayerNorm, a, {SF32({M, 5}), SF32({N + SymDim(1)}), SF32({5})}).warnings.empty());
  // K can be 1, or the last dim.
  EXPECT_TRUE(run(OpId::LayerNorm, a, {SF32({M, N * SymDim(2) + SymDim(3)}), SF32({K}), SF32({1})}).warnings.empty());
}

TEST(LayerNorm, Errors) {
  const Attrs a = attrs({Fl(1e-5)});
  EXPECT_ERROR_HAS(run_both(OpId::LayerNorm, a, {T(DType::kI32, {2, 8}), T(DType::kI32, {8}), T(DType::kI32, {8})}),
                   "layer_norm: needs a float input, got i32");
  EXPECT_ERROR_HAS(run_both(OpId::LayerNorm, a, {F32({}), F32({}), F32({})}), "needs an input with at least one dim");
  EXPECT_ERROR_HAS(run_both(OpId::LayerNorm, a, {F32({2, 8}), T(DType::kF16, {8}), F32({8})}),
                   "layer_norm: gamma is f16 but x is f32");
  EXPECT_ERROR_HAS(run_both(OpId::LayerNorm, a, {F32({2, 8}), F32({8}), F32({2, 8})}),
                   "layer_norm: beta [2, 8] does not match the last dim of [2, 8] (it must be [8], [1] or a scalar)");
  EXPECT_ERROR_HAS(run_both(OpId::LayerNorm, a, {F32({2, 8}), F32({7}), F32({8})}), "gamma [7] does not match");
  EXPECT_ERROR_HAS(run_both(OpId::LayerNorm, attrs({Fl(-1)}), {F32({8}), F32({8}), F32({8})}),
                   "layer_norm: eps must be finite and >= 0");
  EXPECT_EQ(run_both(OpId::LayerNorm, attrs({Fl(std::nan(""))}), {F32({8}), F32({8}), F32({8})}).status.code(),
            StatusCode::kInvalidGraph);
}

// The work estimate that bounds compile-time evaluation: reduced length times the
// output for the contracting ops, the largest operand or result otherwise.
TEST(OpWork, CountsMultiplyAddsAndSaturates) {
  using TT = TensorType<int64_t>;
  const auto work = [](OpId op, std::vector<TT> in, std::vector<TT> out) { return op_work(op, in, out); };
  EXPECT_EQ(work(OpId::MatMul, {{DType::kF32, {2, 3}}, {DType::kF32, {3, 4}}}, {{DType::kF32, {2, 4}}}), 24u);
  EXPECT_EQ(work(OpId::MatMul, {{DType::kF32, {5, 2, 3}}, {DType::kF32, {5, 3, 4}}}, {{DType::kF32, {5, 2, 4}}}),
            120u);
  // 1x8x8x4 -> 1x8x8x6 through a 3x3x4x6 filter: 384 outputs x 36.
  EXPECT_EQ(work(OpId::Conv2D, {{DType::kF32, {1, 8, 8, 4}}, {DType::kF32, {3, 3, 4, 6}}}, {{DType::kF32, {1, 8, 8, 6}}}),
            384u * 36u);
  // Pooling: each output is bounded by the input's plane.
  EXPECT_EQ(work(OpId::MaxPool2D, {{DType::kF32, {1, 4, 4, 2}}}, {{DType::kF32, {1, 2, 2, 2}}}), 8u * 16u);
  EXPECT_EQ(work(OpId::Add, {{DType::kF32, {7, 1}}, {DType::kF32, {1, 9}}}, {{DType::kF32, {7, 9}}}), 63u);
  EXPECT_EQ(work(OpId::Sum, {{DType::kF32, {100, 10}}}, {{DType::kF32, {}}}), 1000u);
  const int64_t big = int64_t(1) << 40;
  EXPECT_EQ(work(OpId::MatMul, {{DType::kF32, {big, big}}, {DType::kF32, {big, big}}}, {{DType::kF32, {big, big}}}),
            UINT64_MAX);
}

}  // namespace
}  // namespace sg::ops
