#include <gtest/gtest.h>

#include <cmath>

#include "ops/rule_tester.h"

namespace sg::ops {
namespace {

using namespace testing;

Status check(OpId op, const Attrs& a, std::vector<size_t> ranks) { return check_attrs(op, a, ranks); }

void expect_rejected(const Status& s, const std::string& text) {
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidGraph);
  EXPECT_NE(s.message().find(text), std::string::npos) << s.message();
}

TEST(CheckAttrs, AcceptsWellFormedNodes) {
  EXPECT_TRUE(check(OpId::Add, {}, {2, 2}).ok());
  EXPECT_TRUE(check(OpId::Sum, attrs({Is({0, 2}), I(1)}), {3}).ok());
  EXPECT_TRUE(check(OpId::Reshape, attrs({Is({-2, -1})}), {4, 0}).ok());
  EXPECT_TRUE(check(OpId::Transpose, attrs({Is({1, 0})}), {2}).ok());
  EXPECT_TRUE(check(OpId::ExpandDims, attrs({Is({0, 3})}), {2}).ok());
  EXPECT_TRUE(check(OpId::Concatenate, attrs({I(0)}), {1, 1, 1}).ok());
  EXPECT_TRUE(check(OpId::Conv2D, attrs({Is({1, 1}), Is({1, 1}), Str("SAME"), I(1)}), {4, 4}).ok());
  EXPECT_TRUE(check(OpId::Cast, attrs({I(int64_t(DType::kBool))}), {1}).ok());
}

TEST(CheckAttrs, Arity) {
  expect_rejected(check(OpId::Add, {}, {2}), "add: expects 2 inputs, got 1");
  expect_rejected(check(OpId::Where, {}, {1, 1, 1, 1}), "where: expects 3 inputs");
  expect_rejected(check(OpId::Concatenate, attrs({I(0)}), {}), "at least 1");
}

TEST(CheckAttrs, CountAndKinds) {
  expect_rejected(check(OpId::Sum, attrs({Is({0})}), {2}), "sum: expects 2 attributes, got 1");
  expect_rejected(check(OpId::Sum, attrs({I(0), I(0)}), {2}), "sum: attribute 'axes' must be ints, got int");
  expect_rejected(check(OpId::Add, attrs({I(0)}), {1, 1}), "add: expects 0 attributes");
  expect_rejected(check(OpId::Conv2D, attrs({Is({1, 1}), Is({1, 1}), I(0), I(1)}), {4, 4}),
                  "'padding' must be string");
}

TEST(CheckAttrs, Axes) {
  expect_rejected(check(OpId::Sum, attrs({Is({2}), I(0)}), {2}), "sum: axis 2 is out of range for rank 2");
  expect_rejected(check(OpId::Sum, attrs({Is({-1}), I(0)}), {2}), "out of range");
  expect_rejected(check(OpId::Sum, attrs({Is({1, 0}), I(0)}), {2}), "sorted and unique");
  expect_rejected(check(OpId::Mean, attrs({Is({0, 0}), I(0)}), {2}), "sorted and unique");
  expect_rejected(check(OpId::Sum, attrs({Is({0}), I(2)}), {2}), "keepdims must be 0 or 1");
  expect_rejected(check(OpId::ArgMax, attrs({I(0), I(0)}), {0}), "argmax: axis 0 is out of range for rank 0");
  expect_rejected(check(OpId::Softmax, attrs({I(3)}), {2}), "softmax: axis 3");
  expect_rejected(check(OpId::Squeeze, attrs({Is({2})}), {2}), "squeeze:");
  expect_rejected(check(OpId::ExpandDims, attrs({Is({4})}), {2}), "expand_dims:");
  expect_rejected(check(OpId::Transpose, attrs({Is({0})}), {2}), "transpose: perm has 1 entries");
  expect_rejected(check(OpId::Transpose, attrs({Is({1, 1})}), {2}), "perm repeats axis 1");
  expect_rejected(check(OpId::Transpose, attrs({Is({0, 2})}), {2}), "perm entry 2");
}

TEST(CheckAttrs, Shapes) {
  expect_rejected(check(OpId::Reshape, attrs({Is({-1, -1})}), {2}), "at most one -1");
  expect_rejected(check(OpId::Reshape, attrs({Is({-3})}), {2}), "invalid shape entry -3");
  expect_rejected(check(OpId::BroadcastTo, attrs({Is({-1, 2})}), {2}), "invalid shape entry -1");
  expect_rejected(check(OpId::Full, attrs({Is({-2, 2})}), {0}), "expects 1 dynamic scalar inputs, got 0");
  expect_rejected(check(OpId::Full, attrs({Is({-2})}), {0, 1}), "input 1 must be a scalar");
}

TEST(CheckAttrs, Slices) {
  const auto slice = [](int64_t step, int64_t flags) {
    return attrs({Is({0}), Is({0}), Is({step}), Is({flags})});
  };
  expect_rejected(check(OpId::Slice, slice(0, 0), {1}), "slice step cannot be 0");
  expect_rejected(check(OpId::Slice, slice(1, 64), {1}), "unknown slice flags");
  expect_rejected(check(OpId::Slice, slice(1, attr::kIndex | attr::kHasEnd), {1}), "an index has no end");
  expect_rejected(check(OpId::Slice, slice(1, attr::kHasBegin | attr::kDynBegin), {1, 0}), "both static and dynamic");
  expect_rejected(check(OpId::Slice, slice(1, attr::kDynEnd), {1}), "expects 1 dynamic scalar inputs, got 0");
  expect_rejected(check(OpId::Slice, slice(1, 0), {2}), "one entry per input axis");
  EXPECT_TRUE(check(OpId::Slice, slice(-2, attr::kDynBegin | attr::kDynEnd), {1, 0, 0}).ok());
}

TEST(CheckAttrs, WindowsAndCasts) {
  expect_rejected(check(OpId::Conv2D, attrs({Is({1, 1}), Is({1, 1}), Str("same"), I(1)}), {4, 4}),
                  "padding must be \"VALID\" or \"SAME\"");
  expect_rejected(check(OpId::Conv2D, attrs({Is({1}), Is({1, 1}), Str("SAME"), I(1)}), {4, 4}),
                  "stride must have 2 entries");
  expect_rejected(check(OpId::Conv2D, attrs({Is({1, 1}), Is({0, 1}), Str("SAME"), I(1)}), {4, 4}),
                  "dilation must be positive");
  expect_rejected(check(OpId::Conv2D, attrs({Is({1, 1}), Is({1, 1}), Str("SAME"), I(0)}), {4, 4}),
                  "groups must be positive");
  expect_rejected(check(OpId::MaxPool2D, attrs({Is({2, -2}), Is({2, 2}), Str("VALID")}), {4}), "size must be positive");
  expect_rejected(check(OpId::Cast, attrs({I(5)}), {1}), "cast: invalid dtype 5");
  expect_rejected(check(OpId::Cast, attrs({I(-1)}), {1}), "invalid dtype");
}

TEST(CheckAttrs, OpsAppendedLater) {
  EXPECT_TRUE(check(OpId::Eye, attrs({I(3), I(2), I(-7), I(0)}), {}).ok());
  expect_rejected(check(OpId::Eye, attrs({I(3), I(-2), I(0), I(0)}), {}), "eye: m must be in [0, 2147483647], got -2");
  expect_rejected(check(OpId::Eye, attrs({I(3), I(2), I(0), I(9)}), {}), "eye: invalid dtype 9");
  expect_rejected(check(OpId::Eye, attrs({I(3), I(2), I(0)}), {}), "eye: expects 4 attributes, got 3");
  EXPECT_TRUE(check(OpId::Arange, {}, {0, 0, 0}).ok());
  expect_rejected(check(OpId::Arange, {}, {0, 1, 0}), "arange: input 1 must be a scalar");
  expect_rejected(check(OpId::Arange, {}, {0, 0}), "arange: expects 3 to 4 inputs, got 2");
  expect_rejected(check(OpId::TopK, attrs({I(1), I(1)}), {1}), "topk: axis 1 is out of range for rank 1");
  expect_rejected(check(OpId::TopK, attrs({I(-1), I(0)}), {1}), "topk: k must be in [0,");
  expect_rejected(check(OpId::CumSum, attrs({I(-1)}), {2}), "cumsum: axis -1 is out of range");
  expect_rejected(check(OpId::Tile, attrs({Is({1, -2})}), {2}), "tile: reps must be in [0,");
  expect_rejected(check(OpId::Pad, attrs({Is({1, 1}), Fl(0), Str("constant")}), {2}), "pad: pads must have 4 entries");
  expect_rejected(check(OpId::Pad, attrs({Is({1, 1}), I(0), Str("constant")}), {1}), "'value' must be float, got int");
  expect_rejected(check(OpId::OneHot, attrs({I(3), I(-1)}), {1}), "one_hot: invalid dtype -1");
  expect_rejected(check(OpId::LayerNorm, attrs({Fl(INFINITY)}), {2, 1, 1}), "layer_norm: eps must be finite");
  const auto slice = attrs({Is({0}), Is({0}), Is({1}), Is({attr::kIndex | attr::kDynBegin})});
  EXPECT_TRUE(check(OpId::SliceUpdate, slice, {1, 0, 0}).ok());
  EXPECT_TRUE(check(OpId::SliceUpdate, slice, {1, 3, 0}).ok());  // the value may have any rank
  expect_rejected(check(OpId::SliceUpdate, slice, {1, 0}), "slice_update: expects 1 dynamic scalar inputs, got 0");
  expect_rejected(check(OpId::SliceUpdate, slice, {1, 0, 1}), "slice_update: input 2 must be a scalar");
  expect_rejected(check(OpId::SliceUpdate, slice, {1}), "slice_update: expects at least 2 inputs, got 1");
}

TEST(CheckAttrs, InferRejectsMalformedNodesInsteadOfReadingOutOfRange) {
  const auto r = run(OpId::Sum, Attrs{}, {F32({2, 3})});
  EXPECT_EQ(r.status.code(), StatusCode::kInvalidGraph);
  EXPECT_EQ(run(OpId::Transpose, attrs({Is({5, 0})}), {F32({2, 3})}).status.code(), StatusCode::kInvalidGraph);
  EXPECT_EQ(run(OpId::Add, Attrs{}, {F32({2})}).status.code(), StatusCode::kInvalidGraph);
  EXPECT_EQ(run(OpId(kNumOps), Attrs{}, {F32({2})}).status.code(), StatusCode::kInvalidGraph);
}


TEST(CheckAttrs, ElementwiseChainSteps) {
  const int64_t add = int64_t(OpId::Add), relu = int64_t(OpId::Relu), exp = int64_t(OpId::Exp);
  const auto chain = [](std::vector<int64_t> steps, size_t inputs) {
    return check(OpId::ElementwiseChain, attrs({Is(std::move(steps))}), std::vector<size_t>(inputs, 2));
  };
  EXPECT_TRUE(chain({add, 0, 1, relu, 2, -1}, 2).ok());
  expect_rejected(chain({}, 2), "steps must be 1 to 16 (op, a, b) triples, got 0 numbers");
  expect_rejected(chain({add, 0}, 2), "got 2 numbers");
  std::vector<int64_t> long_chain;
  for (int j = 0; j < 17; ++j) long_chain.insert(long_chain.end(), {relu, j, -1});
  expect_rejected(chain(long_chain, 1), "got 51 numbers");
  expect_rejected(chain({exp, 0, -1}, 1), "step 0: op 19 cannot be chained");
  expect_rejected(chain({9999, 0, -1}, 1), "cannot be chained");
  expect_rejected(chain({add, 0, 2}, 2), "step 0: second operand 2 is not an input or an earlier step");
  expect_rejected(chain({add, 0, 1, relu, 3, -1}, 2), "step 1: operand 3 is not an input or an earlier step");
  expect_rejected(chain({add, -1, 0}, 2), "step 0: operand -1");
  expect_rejected(chain({relu, 0, 0}, 1), "second operand 0 is not -1 (a unary op)");
  expect_rejected(chain({add, 0, -1}, 1), "second operand -1 is not an input");
}

TEST(CheckAttrs, ElementwiseChainOutputs) {
  const int64_t add = int64_t(OpId::Add), relu = int64_t(OpId::Relu);
  const auto chain = [](std::vector<int64_t> outputs) {
    return check(OpId::ElementwiseChain, attrs({Is({add, 0, 1, relu, 2, -1, add, 3, 0}), Is(std::move(outputs))}),
                 std::vector<size_t>(2, 2));
  };
  EXPECT_TRUE(chain({0, 2}).ok());
  EXPECT_TRUE(chain({0, 1, 2}).ok());
  EXPECT_TRUE(chain({}).ok());  // as without the attribute: the last step's result
  EXPECT_EQ(output_count(OpId::ElementwiseChain, attrs({Is({add, 0, 1}), Is({0})})), 1u);
  EXPECT_EQ(output_count(OpId::ElementwiseChain, attrs({Is({add, 0, 1})})), 1u);
  EXPECT_EQ(output_count(OpId::ElementwiseChain, attrs({Is({add, 0, 1, relu, 2, -1}), Is({0, 1})})), 2u);
  expect_rejected(chain({0, 1}), "the last output must be the last step's result");
  expect_rejected(chain({1, 0, 2}), "outputs must be increasing steps below 3, got 0 at 1");
  expect_rejected(chain({2, 2}), "got 2 at 1");
  expect_rejected(chain({-1, 2}), "got -1 at 0");
  expect_rejected(chain({0, 3}), "got 3 at 1");
  expect_rejected(check(OpId::ElementwiseChain, attrs({Is({add, 0, 1}), Is({0}), Is({0})}), std::vector<size_t>(2, 2)),
                  "expects 1 to 2 attributes, got 3");
}

}  // namespace
}  // namespace sg::ops
