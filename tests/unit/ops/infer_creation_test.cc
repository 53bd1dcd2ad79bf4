// eye, arange (lengths from values, exact on symbolic dims where possible) and one_hot.
#include <gtest/gtest.h>

#include "ops/rule_tester.h"

namespace sg::ops {
namespace {

using namespace testing;
const Attrs kNoAttrs;

Attrs eye(int64_t n, int64_t m, int64_t k, DType t) { return attrs({I(n), I(m), I(k), I(int64_t(t))}); }

TEST(Eye, ShapeAndDtypeFromAttributes) {
  EXPECT_EQ(run_both(OpId::Eye, eye(3, 4, 1, DType::kI32), {}).type, T(DType::kI32, {3, 4}));
  EXPECT_EQ(run_both(OpId::Eye, eye(0, 0, -5, DType::kBool), {}).type, T(DType::kBool, {0, 0}));
  EXPECT_ERROR_HAS(run_both(OpId::Eye, eye(-1, 2, 0, DType::kF32), {}), "eye: n must be in [0,");
  EXPECT_ERROR_HAS(run_both(OpId::Eye, eye(2, 2, 0, DType(7)), {}), "eye: invalid dtype 7");
  EXPECT_ERROR_HAS(run_both(OpId::Eye, eye(2, 2, 0, DType::kF32), {F32({})}), "eye: expects 0 inputs, got 1");
}

// arange(start, stop, step) on i64 scalars with these values.
Inferred<int64_t> int_arange(int64_t start, int64_t stop, int64_t step, DType t = DType::kI64) {
  return run_both(OpId::Arange, kNoAttrs, {T(t, {}), T(t, {}), T(t, {})}, {start, stop, step});
}

TEST(Arange, IntegerLengthsAreNumPys) {
  EXPECT_EQ(int_arange(0, 5, 1).shape, "[5]");
  EXPECT_EQ(int_arange(2, 9, 3).shape, "[3]");   // 2 5 8
  EXPECT_EQ(int_arange(2, 10, 3).shape, "[3]");  // 2 5 8
  EXPECT_EQ(int_arange(2, 11, 3).shape, "[3]");
  EXPECT_EQ(int_arange(2, 12, 3).shape, "[4]");
  EXPECT_EQ(int_arange(5, 0, 1).shape, "[0]");
  EXPECT_EQ(int_arange(5, 0, -2).shape, "[3]");  // 5 3 1
  EXPECT_EQ(int_arange(0, 5, -1).shape, "[0]");
  EXPECT_EQ(int_arange(-3, 3, 1, DType::kI32).type, T(DType::kI32, {6}));
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(int_arange(lo, hi, hi).shape, "[3]");  // no overflow in stop - start
  EXPECT_ERROR_HAS(int_arange(lo, hi, 1), "arange: the result has too many elements");
}

TEST(Arange, Errors) {
  EXPECT_ERROR_HAS(int_arange(0, 5, 0), "arange: step cannot be zero");
  EXPECT_ERROR_HAS(run_both(OpId::Arange, kNoAttrs, {T(DType::kI64, {}), T(DType::kI32, {}), T(DType::kI64, {})},
                            {0, 5, 1}),
                   "arange: start, stop and step must have one dtype, got i64, i32 and i64");
  EXPECT_ERROR_HAS(run_both(OpId::Arange, kNoAttrs, {T(DType::kBool, {}), T(DType::kBool, {}), T(DType::kBool, {})}),
                   "must be numbers, got bool");
  EXPECT_ERROR_HAS(run_both(OpId::Arange, kNoAttrs, {F32({}), F32({}), F32({})}),
                   "arange: a float arange takes 4 inputs, got 3");
  EXPECT_ERROR_HAS(run_both(OpId::Arange, kNoAttrs,
                            {T(DType::kI64, {}), T(DType::kI64, {}), T(DType::kI64, {}), T(DType::kI64, {})},
                            {0, 5, 1, 5}),
                   "arange: an integer arange takes 3 inputs, got 4");
  EXPECT_EQ(run_both(OpId::Arange, kNoAttrs, {T(DType::kI64, {2}), T(DType::kI64, {}), T(DType::kI64, {})}).status.code(),
            StatusCode::kInvalidGraph);  // operands are scalars
}

TEST(Arange, FloatLengthIsTheFourthInput) {
  const auto f = F32({});
  auto r = run_both(OpId::Arange, kNoAttrs, {f, f, f, T(DType::kI64, {})}, {std::nullopt, std::nullopt, std::nullopt, 7});
  EXPECT_EQ(r.type, F32({7}));
  EXPECT_EQ(run_both(OpId::Arange, kNoAttrs, {T(DType::kF16, {}), T(DType::kF16, {}), T(DType::kF16, {}), T(DType::kI32, {})},
                     {std::nullopt, std::nullopt, std::nullopt, 0})
                .type,
            T(DType::kF16, {0}));
  EXPECT_ERROR_HAS(run_both(OpId::Arange, kNoAttrs, {f, f, f, T(DType::kI64, {})},
                            {std::nullopt, std::nullopt, std::nullopt, -1}),
                   "arange: the length -1 is negative");
  EXPECT_ERROR_HAS(run_both(OpId::Arange, kNoAttrs, {f, f, f, f}), "must be an integer scalar");
  // Staged at compile time: a fresh dim.
  auto s = run(OpId::Arange, kNoAttrs, {SF32({}), SF32({}), SF32({}), S(DType::kI64, {})});
  ASSERT_TRUE(s.status.ok()) << s.status.message();
  EXPECT_EQ(s.fresh, 1);
}

Inferred<SymDim> sym_arange(std::optional<SymDim> start, std::optional<SymDim> stop, std::optional<SymDim> step) {
  const auto i = S(DType::kI64, {});
  return run(OpId::Arange, kNoAttrs, {i, i, i}, {start, stop, step});
}

TEST(Arange, SymbolicBounds) {
  EXPECT_EQ(sym_arange(SymDim(0), N, SymDim(1)).shape, "[N]");
  EXPECT_EQ(sym_arange(SymDim(0), M + SymDim(1), SymDim(1)).shape, "[M+1]");  // arange(len(b) + 1)
  EXPECT_EQ(sym_arange(SymDim(2), N + SymDim(5), SymDim(1)).shape, "[N+3]");
  EXPECT_EQ(sym_arange(SymDim(0), N * SymDim(4), SymDim(2)).shape, "[N*2]");
  EXPECT_EQ(sym_arange(N, SymDim(0), SymDim(-1)).shape, "[N]");
  // Possibly negative spans, staged values and ceil(N/2) are fresh dims.
  EXPECT_EQ(sym_arange(SymDim(1), N, SymDim(1)).fresh, 1);
  EXPECT_EQ(sym_arange(SymDim(0), N, SymDim(2)).fresh, 1);
  EXPECT_EQ(sym_arange(SymDim(0), std::nullopt, SymDim(1)).fresh, 1);
  EXPECT_EQ(sym_arange(SymDim(0), N, std::nullopt).fresh, 1);
  EXPECT_ERROR_HAS(sym_arange(std::nullopt, N, SymDim(0)), "arange: step cannot be zero");
  EXPECT_EQ(sym_arange(SymDim(3), SymDim(10), SymDim(2)).shape, "[4]");
}

TEST(OneHot, AppendsDepth) {
  const Attrs a = attrs({I(5), I(int64_t(DType::kF32))});
  EXPECT_EQ(run_both(OpId::OneHot, a, {T(DType::kI64, {2, 3})}).type, F32({2, 3, 5}));
  EXPECT_EQ(run_both(OpId::OneHot, attrs({I(0), I(int64_t(DType::kBool))}), {T(DType::kI32, {})}).type,
            T(DType::kBool, {0}));
  EXPECT_EQ(run(OpId::OneHot, a, {S(DType::kI32, {N})}).shape, "[N, 5]");
  EXPECT_ERROR_HAS(run_both(OpId::OneHot, a, {F32({2})}), "one_hot: indices must be i32 or i64, got f32");
  EXPECT_ERROR_HAS(run_both(OpId::OneHot, attrs({I(-1), I(0)}), {T(DType::kI64, {2})}), "one_hot: depth must be in [0,");
}

}  // namespace
}  // namespace sg::ops
