#include <gtest/gtest.h>

#include "ops/rule_tester.h"

namespace sg::ops {
namespace {

using namespace testing;
using attr::kDynBegin;
using attr::kDynEnd;
using attr::kHasBegin;
using attr::kHasEnd;
using attr::kIndex;

// One axis of a slice: x[b:e:s], an index x[i], or ":" (all).
struct Axis {
  int64_t begin = 0, end = 0, step = 1, flags = 0;
};
Axis all() { return {}; }
Axis range(int64_t b, int64_t e, int64_t s = 1) { return {b, e, s, kHasBegin | kHasEnd}; }
Axis from(int64_t b, int64_t s = 1) { return {b, 0, s, kHasBegin}; }
Axis to(int64_t e, int64_t s = 1) { return {0, e, s, kHasEnd}; }
Axis step(int64_t s) { return {0, 0, s, 0}; }
Axis index(int64_t i) { return {i, 0, 1, kIndex | kHasBegin}; }

Attrs slice(std::vector<Axis> axes) {
  std::vector<int64_t> b, e, s, f;
  for (const Axis& a : axes) {
    b.push_back(a.begin);
    e.push_back(a.end);
    s.push_back(a.step);
    f.push_back(a.flags);
  }
  return attrs({Is(b), Is(e), Is(s), Is(f)});
}

// The NumPy length of x[b:e:s] on a 1-D array of size n.
std::string len(int64_t n, Axis a) { return run_both(OpId::Slice, slice({a}), {F32({n})}).shape; }

TEST(Slice, StaticBoundsClampLikeNumPy) {
  EXPECT_EQ(len(10, all()), "[10]");
  EXPECT_EQ(len(10, range(2, 5)), "[3]");
  EXPECT_EQ(len(10, range(-3, 100)), "[3]");
  EXPECT_EQ(len(10, range(5, 2)), "[0]");
  EXPECT_EQ(len(10, range(-100, 2)), "[2]");
  EXPECT_EQ(len(10, range(1, 10, 3)), "[3]");   // 1 4 7
  EXPECT_EQ(len(10, step(-1)), "[10]");
  EXPECT_EQ(len(10, step(-3)), "[4]");          // 9 6 3 0
  EXPECT_EQ(len(10, range(8, 2, -2)), "[3]");   // 8 6 4
  EXPECT_EQ(len(10, from(-1, -1)), "[10]");
  EXPECT_EQ(len(10, to(-11, -1)), "[10]");      // x[:-11:-1]
  EXPECT_EQ(len(10, from(100, -1)), "[10]");
  EXPECT_EQ(len(0, all()), "[0]");
  EXPECT_EQ(len(0, step(-1)), "[0]");
}

TEST(Slice, IndicesDropTheAxis) {
  EXPECT_EQ(run_both(OpId::Slice, slice({all(), index(0)}), {F32({4, 5})}).shape, "[4]");
  EXPECT_EQ(run_both(OpId::Slice, slice({index(-1), range(1, 3)}), {F32({4, 5})}).shape, "[2]");
  EXPECT_EQ(run_both(OpId::Slice, slice({index(2)}), {F32({3})}).shape, "[]");
  EXPECT_ERROR_HAS(run_both(OpId::Slice, slice({index(5)}), {F32({3})}),
                   "slice: index 5 is out of bounds for axis 0 with size 3");
  EXPECT_ERROR_HAS(run_both(OpId::Slice, slice({all(), index(-4)}), {F32({2, 3})}),
                   "index -4 is out of bounds for axis 1 with size 3");
}

TEST(Slice, DynamicBoundsAtRunTime) {
  const Attrs a = slice({{0, 0, 1, kDynBegin | kDynEnd}, {0, 0, 1, kIndex | kDynBegin}});
  const TensorType<int64_t> i64 = T(DType::kI64, {});
  const TensorType<int64_t> i32 = T(DType::kI32, {});
  auto r = run_both(OpId::Slice, a, {F32({10, 4}), i64, i32, i64}, {std::nullopt, 2, 7, 3});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.shape, "[5]");
  EXPECT_ERROR_HAS(run_both(OpId::Slice, a, {F32({10, 4}), i64, i32, i64}, {std::nullopt, 2, 7, 4}),
                   "index 4 is out of bounds for axis 1 with size 4");
}

TEST(Slice, SymbolicDims) {
  EXPECT_EQ(run(OpId::Slice, slice({from(1)}), {SF32({N})}).shape, "[N-1]");
  EXPECT_EQ(run(OpId::Slice, slice({from(-1)}), {SF32({N})}).shape, "[1]");
  EXPECT_EQ(run(OpId::Slice, slice({to(-1)}), {SF32({N})}).shape, "[N-1]");
  EXPECT_EQ(run(OpId::Slice, slice({step(-1)}), {SF32({N})}).shape, "[N]");
  // x[2:5] of [N] has min(max(N - 2, 0), 3) elements: a fresh dim, not [3],
  // which N < 5 would contradict (x[:1] and x[-1:] of a non-empty axis are [1]).
  auto up_to_three = run(OpId::Slice, slice({range(2, 5)}), {SF32({N})});
  EXPECT_EQ(up_to_three.fresh, 1);
  EXPECT_EQ(run(OpId::Slice, slice({to(1)}), {SF32({N})}).shape, "[1]");
  EXPECT_EQ(run(OpId::Slice, slice({all(), index(0)}), {SF32({N, M})}).shape, "[N]");
  EXPECT_EQ(run(OpId::Slice, slice({index(-1), all()}), {SF32({N, M})}).shape, "[M]");
  EXPECT_EQ(run(OpId::Slice, slice({step(2)}), {SF32({N * SymDim(2)})}).shape, "[N]");
  auto strided = run(OpId::Slice, slice({step(2)}), {SF32({N})});
  EXPECT_EQ(strided.fresh, 1);  // ceil(N/2)
}

TEST(Slice, SymbolicDynamicBounds) {
  // x[:n] with n = len(b) = M on a [10] value, and x[i:] with i unknown.
  const Attrs up_to = slice({{0, 0, 1, kDynEnd}});
  EXPECT_EQ(run(OpId::Slice, up_to, {SF32({10}), S(DType::kI64, {})}, {std::nullopt, M}).shape, "[M]");
  auto r = run(OpId::Slice, slice({{0, 0, 1, kDynBegin}}), {SF32({N}), S(DType::kI64, {})},
               {std::nullopt, std::nullopt});
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(r.fresh, 1);
  // A staged index drops the axis without a check at compile time.
  EXPECT_EQ(run(OpId::Slice, slice({{0, 0, 1, kIndex | kDynBegin}, all()}), {SF32({N, 3}), S(DType::kI64, {})},
                {std::nullopt, std::nullopt})
                .shape,
            "[3]");
}

TEST(Slice, RejectsBadNodes) {
  EXPECT_FALSE(run_both(OpId::Slice, slice({step(0)}), {F32({3})}).status.ok());
  EXPECT_FALSE(run_both(OpId::Slice, slice({all()}), {F32({3, 4})}).status.ok());  // one entry per axis
  EXPECT_ERROR_HAS(run_both(OpId::Slice, slice({{0, 0, 1, kDynBegin}}), {F32({3}), F32({})}, {std::nullopt, 1}),
                   "must be an integer scalar");
}

// x[...] = v: the region comes from the same attributes; dynamic bounds follow v.
TEST(SliceUpdate, KeepsXsTypeAndBroadcastsTheValue) {
  EXPECT_EQ(run_both(OpId::SliceUpdate, slice({range(1, 3), index(0)}), {F32({4, 5}), F32({2})}).type, F32({4, 5}));
  EXPECT_TRUE(run_both(OpId::SliceUpdate, slice({range(1, 3), all()}), {F32({4, 5}), F32({})}).status.ok());
  EXPECT_TRUE(run_both(OpId::SliceUpdate, slice({range(1, 3), all()}), {F32({4, 5}), F32({1, 5})}).status.ok());
  EXPECT_TRUE(run_both(OpId::SliceUpdate, slice({index(1), all()}), {F32({4, 5}), F32({1, 1, 5})}).status.ok());
  EXPECT_ERROR_HAS(run_both(OpId::SliceUpdate, slice({range(1, 3), all()}), {F32({4, 5}), F32({3, 5})}),
                   "slice_update: cannot broadcast a value of shape [3, 5] into the selected region [2, 5] of [4, 5]");
  EXPECT_ERROR_HAS(run_both(OpId::SliceUpdate, slice({index(1), all()}), {F32({4, 5}), F32({2, 5})}),
                   "cannot broadcast a value of shape [2, 5]");
  EXPECT_ERROR_HAS(run_both(OpId::SliceUpdate, slice({all()}), {F32({4}), T(DType::kI32, {4})}),
                   "slice_update: the value is i32 but the tensor is f32; cast with astype");
}

TEST(SliceUpdate, IndexOutOfRangeNamesTheOp) {
  EXPECT_ERROR_HAS(run_both(OpId::SliceUpdate, slice({index(5)}), {F32({3}), F32({})}),
                   "slice_update: index 5 is out of bounds for axis 0 with size 3");
  const Attrs dyn = slice({{0, 0, 1, kIndex | kDynBegin}, all()});
  const TensorType<int64_t> i64 = T(DType::kI64, {});
  EXPECT_ERROR_HAS(run_both(OpId::SliceUpdate, dyn, {F32({3, 2}), F32({2}), i64}, {std::nullopt, std::nullopt, -4}),
                   "slice_update: index -4 is out of bounds for axis 0 with size 3");
  EXPECT_TRUE(run_both(OpId::SliceUpdate, dyn, {F32({3, 2}), F32({2}), i64}, {std::nullopt, std::nullopt, 2}).status.ok());
  // The dynamic bounds come after the value: a missing one is a malformed node.
  EXPECT_EQ(run_both(OpId::SliceUpdate, dyn, {F32({3, 2}), F32({2})}).status.code(), StatusCode::kInvalidGraph);
}

TEST(SliceUpdate, SymbolicRegions) {
  // x[:, i] = v with a staged i on [N, M]: the region is [N], checked against v.
  const Attrs dyn = slice({all(), {0, 0, 1, kIndex | kDynBegin}});
  const auto i64 = S(DType::kI64, {});
  EXPECT_EQ(run(OpId::SliceUpdate, dyn, {SF32({N, M}), SF32({N}), i64}, {std::nullopt, std::nullopt, std::nullopt}).shape,
            "[N, M]");
  EXPECT_ERROR_HAS(run(OpId::SliceUpdate, dyn, {SF32({N, M}), SF32({N + SymDim(1)}), i64},
                       {std::nullopt, std::nullopt, std::nullopt}),
                   "cannot broadcast a value of shape [N+1] into the selected region [N]");
  // A region of unknown length accepts any value; the run-time rule decides.
  auto r = run(OpId::SliceUpdate, slice({{0, 0, 1, kDynEnd}}), {SF32({N}), SF32({3}), i64},
               {std::nullopt, std::nullopt, std::nullopt});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.shape, "[N]");
}

// SPEC §8: a value no binding lets into the region: a warning, once per node.
TEST(SliceUpdate, WarnsWhereNoBindingFitsTheValue) {
  auto r = run(OpId::SliceUpdate, slice({range(1, 4), all()}), {SF32({4, 5}), SF32({M * SymDim(2), 5})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0], "slice_update: cannot broadcast a value of shape [M*2, 5] into the selected region [3, 5] "
                           "of [4, 5]: M*2 can be neither 3 nor 1 for any M, so this fails at run time for every "
                           "input");
  auto lead = run(OpId::SliceUpdate, slice({index(1), all()}), {SF32({4, 5}), SF32({M + SymDim(2), 1, 5})});
  ASSERT_EQ(lead.warnings.size(), 1u);
  EXPECT_NE(lead.warnings[0].find("M+2 cannot be 1 for any M"), std::string::npos) << lead.warnings[0];
  EXPECT_TRUE(run(OpId::SliceUpdate, slice({range(1, 3), all()}), {SF32({4, 5}), SF32({M * SymDim(2), 5})})
                  .warnings.empty());
}

}  // namespace
}  // namespace sg::ops
