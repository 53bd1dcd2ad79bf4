// Staging of shapes and dtypes: SPEC §3's dtype rules for Python scalars,
// scalars tied to symbolic dims, indexing and slicing, reductions.
#include <gtest/gtest.h>

#include "compiler/staging_test_util.h"

namespace sg::compiler {
namespace {

using testing::stage_source;

TEST(StagingShapes, PythonScalarDtypeRules) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(i: sg.i32[4], b: sg.bool[4], h: sg.f16[4]):
    return i + 1, i * 1.5, b + 1, h * 2.0, i / 2, b & (i > 0), 3 + 4, i >= 2
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.result_type("f", 0), "i32[4]");
  EXPECT_EQ(r.result_type("f", 1), "f32[4]");
  EXPECT_EQ(r.result_type("f", 2), "i64[4]");
  EXPECT_EQ(r.result_type("f", 3), "f16[4]");
  EXPECT_EQ(r.result_type("f", 4), "f32[4]");
  EXPECT_EQ(r.result_type("f", 5), "bool[4]");
  EXPECT_EQ(r.result_type("f", 6), "i64[]");
  EXPECT_EQ(r.result_type("f", 7), "bool[4]");
  EXPECT_EQ(r.count_ops("f", ops::OpId::Cast), 2u);  // i32 -> f32 for `* 1.5`, bool -> i64
  EXPECT_EQ(ir::verify(*r.ir), "");
}

TEST(StagingShapes, ReshapeWithShapeItemKeepsTheSymbolicDim) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(y: sg.f32["N", 6, 6, 8]):
    flat = sg.reshape(y, (y.shape[0], -1))
    n = len(y)
    z = sg.zeros((n + 1, 2))
    return flat, z, y.reshape(n, 36, 8)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.result_type("f", 0), "f32[N, 288]");
  EXPECT_EQ(r.result_type("f", 1), "f32[N+1, 2]");
  EXPECT_EQ(r.result_type("f", 2), "f32[N, 36, 8]");
  EXPECT_EQ(r.count_ops("f", ops::OpId::ShapeDim), 1u);  // y.shape[0] and len(y) share one
  EXPECT_EQ(ir::verify(*r.ir), "");
}

TEST(StagingShapes, ArangeWithStagedBoundsIsANodeKeepingTheDim) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(b: sg.f32["M"], n: sg.i32, x: sg.f32):
    return sg.arange(len(b) + 1), sg.arange(n), sg.arange(x), sg.eye(3, 4, 1), sg.eye(2, k=-1)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.result_type("f", 0), "i64[M+1]");  // SPEC §3's example
  EXPECT_EQ(r.result_type("f", 1).substr(0, 4), "i64[");
  EXPECT_EQ(r.result_type("f", 2).substr(0, 4), "f32[");
  EXPECT_EQ(r.result_type("f", 3), "f32[3, 4]");
  EXPECT_EQ(r.result_type("f", 4), "f32[2, 2]");
  EXPECT_EQ(r.count_ops("f", ops::OpId::Arange), 3u);
  EXPECT_EQ(ir::verify(*r.ir), "");
}

TEST(StagingShapes, LayerNormAndOneHotAreTheirOps) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32["N", 8], g: sg.f32[8], i: sg.i32["N"], m: sg.bool["N", 2]):
    return sg.layer_norm(x, g, 0.5), sg.one_hot(i, 5), sg.logical_and(m, True), sg.pad(m, 1)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.result_type("f", 0), "f32[N, 8]");
  EXPECT_EQ(r.result_type("f", 1), "f32[N, 5]");
  EXPECT_EQ(r.result_type("f", 2), "bool[N, 2]");
  EXPECT_EQ(r.result_type("f", 3), "bool[N+2, 4]");
  EXPECT_EQ(r.count_ops("f", ops::OpId::LayerNorm), 1u);
  EXPECT_EQ(r.count_ops("f", ops::OpId::OneHot), 1u);
  EXPECT_EQ(ir::verify(*r.ir), "");
}

TEST(StagingShapes, IndexingAndSlicing) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32["N", 5, 4], i: sg.i64):
    return x[:, 1], x[..., None], x[0, 1:4:2], x[i], x[:, -1, ::2], x.T
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.result_type("f", 0), "f32[N, 4]");
  EXPECT_EQ(r.result_type("f", 1), "f32[N, 5, 4, 1]");
  EXPECT_EQ(r.result_type("f", 2), "f32[2, 4]");
  EXPECT_EQ(r.result_type("f", 3), "f32[5, 4]");
  EXPECT_EQ(r.result_type("f", 4), "f32[N, 2]");
  EXPECT_EQ(r.result_type("f", 5), "f32[4, 5, N]");
  EXPECT_EQ(r.count_ops("f", ops::OpId::ExpandDims), 1u);
  EXPECT_EQ(ir::verify(*r.ir), "");
}

TEST(StagingShapes, ReductionsNormalizeAxes) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32["N", 3, 4], b: sg.bool["N"]):
    return (sg.sum(x, axis=-1), sg.mean(x, axis=(0, 2), keepdims=True), sg.max(x),
            sg.argmax(x, axis=1), sg.argmax(x), x.sum(axis=1), sg.any(b))
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.result_type("f", 0), "f32[N, 3]");
  EXPECT_EQ(r.result_type("f", 1), "f32[1, 3, 1]");
  EXPECT_EQ(r.result_type("f", 2), "f32[]");
  EXPECT_EQ(r.result_type("f", 3), "i64[N, 4]");
  EXPECT_EQ(r.result_type("f", 4), "i64[]");
  EXPECT_EQ(r.result_type("f", 5), "f32[N, 4]");
  EXPECT_EQ(r.result_type("f", 6), "bool[]");
  EXPECT_EQ(ir::verify(*r.ir), "");
}

TEST(StagingShapes, StaticTensorsFoldWithTheReferenceKernels) {
  auto r = stage_source(R"(import stagegraph as sg

W = sg.reshape(sg.arange(6), (2, 3)).astype(sg.f32)

@sg.function
def f(x: sg.f32["N", 2]):
    s = float(sg.sum(W[1]))
    assert s == 12.0
    return x @ W + s
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.result_type("f"), "f32[N, 3]");
  EXPECT_EQ(r.count_ops("f", ops::OpId::MatMul), 1u);
  EXPECT_EQ(r.count_ops("f", ops::OpId::Add), 1u);
}

TEST(StagingShapes, ConcatenateStackAndCreation) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(a: sg.f32["N", 2], b: sg.f32["N", 3]):
    c = sg.concatenate([a, b], axis=1)
    s = sg.stack([a, a])
    o = sg.ones_like(b)
    return c, s, o, sg.full((2, 2), 7, dtype=sg.i32), sg.where(a > 0, a, 0.0)
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.result_type("f", 0), "f32[N, 5]");
  EXPECT_EQ(r.result_type("f", 1), "f32[2, N, 2]");
  EXPECT_EQ(r.result_type("f", 2), "f32[N, 3]");
  EXPECT_EQ(r.result_type("f", 3), "i32[2, 2]");
  EXPECT_EQ(r.result_type("f", 4), "f32[N, 2]");
  EXPECT_EQ(ir::verify(*r.ir), "");
}

}  // namespace
}  // namespace sg::compiler
