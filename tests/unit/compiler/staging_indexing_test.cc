// Indexing with a tensor of indices or a boolean mask (SPEC §7): what it lowers to,
// and golden diagnostics for what is refused, each naming the tool to use instead.
#include <gtest/gtest.h>

#include "compiler/staging_test_util.h"

namespace sg::compiler {
namespace {

using testing::stage_source;

std::string refusal(const std::string& body, const std::string& params = "x: sg.f32[\"N\", 4, 3], i: sg.i64[2]") {
  auto r = stage_source("import stagegraph as sg\n\n@sg.function\ndef f(" + params + "):\n" + body);
  EXPECT_FALSE(r.ir);
  return r.locations();
}

TEST(StagingIndexing, RefusalsNameTheRightTool) {
  EXPECT_EQ(refusal("    return x[i, :, i]\n"),
            "5:12: error: indexing with more than one tensor index (NumPy broadcasts them together) is not "
            "supported; index one axis at a time with sg.take(x, idx, axis)\n");
  EXPECT_EQ(refusal("    return x[x[:, 0, 0] > 0, :, x[0, 0] > 0]\n"),
            "5:12: error: indexing with more than one tensor index (NumPy broadcasts them together) is not "
            "supported; index one axis at a time with sg.where(mask) or sg.compress(mask, x, axis)\n");
  EXPECT_EQ(refusal("    return x[0, :, i]\n"),
            "5:12: error: integer indices separated from a tensor index by a slice move the indexed axes to the "
            "front (NumPy's rule), which is not supported here; index in two steps, or use sg.take(x, idx, axis)\n");
  EXPECT_EQ(refusal("    return x[None, i]\n"),
            "5:12: error: None (a new axis) beside a tensor index is not supported; add the axis with "
            "sg.expand_dims\n");
  EXPECT_EQ(refusal("    return x[x[0, 0, 0] > 0]\n"),
            "5:14: error: a boolean scalar index is not supported; select with sg.where(cond, x, y) or an if\n");
  EXPECT_EQ(refusal("    return x[x[0] > 0.5]\n"),
            "5:12: error: boolean index bool[4, 3] does not match the indexed f32[N, 4, 3] along axis 1\n"
            "  4:10: note: x declared as f32[N, 4, 3] here\n"
            "  5:19: note: `x[0] > 0.5` produced bool[4, 3] here\n");
  EXPECT_EQ(refusal("    return x[sg.zeros(2)]\n"),
            "5:14: error: an index tensor must hold integers or bools, got f32\n");
  EXPECT_EQ(refusal("    return sg.nonzero(x[0, 0, 0])\n"),
            "5:12: error: nonzero: a 0-d tensor has no axes to give positions along (NumPy refuses it too); "
            "use sg.flatnonzero(sg.reshape(x, (1,)))\n");
  EXPECT_EQ(refusal("    return sg.compress(x > 0, x)\n"),
            "5:12: error: compress: the condition must be 1-d, got bool[N, 4, 3]; select with a boolean index "
            "x[mask] or sg.where(mask)\n");
  EXPECT_EQ(refusal("    y = x\n    y[i] = sg.zeros(3, dtype=sg.i32)\n    return y\n"),
            "6:5: error: item assignment: cannot store i32 into a f32 tensor; cast with astype\n"
            "  4:10: note: x declared as f32[N, 4, 3] here\n"
            "  6:12: note: `sg.zeros(3, dtype=sg.i32)` produced i32[3] here\n");
}

TEST(StagingIndexing, LowersToTakeFlatNonzeroAndScatter) {
  auto r = stage_source(R"(import stagegraph as sg

@sg.function
def f(x: sg.f32["N", 4], i: sg.i64[3]):
    a = x[i]
    b = x[x > 0.0]
    c = x
    c[i] = 1.0
    d = x
    d[x[:, 0] > 0.0] = 2.0
    return a, b, c, d
)");
  ASSERT_TRUE(r.ir) << r.locations();
  EXPECT_EQ(r.count_ops("f", ops::OpId::Take), 2u);         // x[i], x[mask]
  EXPECT_EQ(r.count_ops("f", ops::OpId::FlatNonzero), 1u);  // x[mask]; d's scalar store is a where
  EXPECT_EQ(r.count_ops("f", ops::OpId::Scatter), 1u);      // c[i] = 1.0
  EXPECT_EQ(r.count_ops("f", ops::OpId::Where), 1u);
  EXPECT_EQ(r.result_type("f", 0), "f32[3, 4]");
  EXPECT_EQ(r.result_type("f", 2), "f32[N, 4]");
  EXPECT_EQ(r.result_type("f", 3), "f32[N, 4]");
}

}  // namespace
}  // namespace sg::compiler
