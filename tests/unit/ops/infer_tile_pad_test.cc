// tile and pad: NumPy's shapes, exact on symbolic dims.
#include <gtest/gtest.h>

#include "ops/rule_tester.h"

namespace sg::ops {
namespace {

using namespace testing;

Attrs tile(std::vector<int64_t> reps) { return attrs({Is(std::move(reps))}); }
Attrs pad(std::vector<int64_t> widths, double value = 0) { return attrs({Is(std::move(widths)), Fl(value), Str("constant")}); }

TEST(Tile, AlignsRepsAndShapeAtTheRight) {
  EXPECT_EQ(run_both(OpId::Tile, tile({2, 3}), {F32({4, 5})}).shape, "[8, 15]");
  EXPECT_EQ(run_both(OpId::Tile, tile({2}), {F32({4, 5})}).shape, "[4, 10]");         // reps padded with 1s
  EXPECT_EQ(run_both(OpId::Tile, tile({2, 1, 3}), {F32({4, 5})}).shape, "[2, 4, 15]");  // x promoted
  EXPECT_EQ(run_both(OpId::Tile, tile({3}), {F32({})}).shape, "[3]");
  EXPECT_EQ(run_both(OpId::Tile, tile({}), {T(DType::kBool, {2})}).type, T(DType::kBool, {2}));
  EXPECT_EQ(run_both(OpId::Tile, tile({0, 2}), {F32({4, 5})}).shape, "[0, 10]");
  EXPECT_EQ(run(OpId::Tile, tile({2, 1}), {SF32({N, M})}).shape, "[N*2, M]");
}

TEST(Tile, RejectsNegativeRepsAndOverflow) {
  EXPECT_EQ(run_both(OpId::Tile, tile({-1}), {F32({4})}).status.code(), StatusCode::kInvalidGraph);
  const int64_t big = int64_t(1) << 30;
  EXPECT_ERROR_HAS(run_both(OpId::Tile, tile({big, big, big}), {F32({1 << 20, 1 << 20, 1 << 20})}), "tile:");
}

TEST(Pad, AddsBeforeAndAfter) {
  EXPECT_EQ(run_both(OpId::Pad, pad({1, 2, 0, 3}), {F32({4, 5})}).shape, "[7, 8]");
  EXPECT_EQ(run_both(OpId::Pad, pad({}), {T(DType::kI64, {})}).type, T(DType::kI64, {}));
  EXPECT_EQ(run_both(OpId::Pad, pad({2, 2}, 1), {T(DType::kBool, {0})}).type, T(DType::kBool, {4}));
  EXPECT_EQ(run(OpId::Pad, pad({1, 2, 0, 0}), {SF32({N, M})}).shape, "[N+3, M]");
}

TEST(Pad, RejectsBadWidthsAndModes) {
  EXPECT_ERROR_HAS(run_both(OpId::Pad, pad({1, 2}), {F32({4, 5})}), "pad: pads must have 4 entries, got 2");
  EXPECT_ERROR_HAS(run_both(OpId::Pad, pad({1, -1}), {F32({4})}), "pad: pads must be in [0,");
  EXPECT_ERROR_HAS(run_both(OpId::Pad, attrs({Is({1, 1}), Fl(0), Str("reflect")}), {F32({4})}),
                   "pad: mode must be \"constant\", got \"reflect\"");
}

}  // namespace
}  // namespace sg::ops
