#include <gtest/gtest.h>

#include "ops/dim.h"
#include "ops/rule_tester.h"

namespace sg::ops {
namespace {

using testing::K;
using testing::M;
using testing::N;

std::string text(const SymDim& d) {
  static const char* kNames[] = {"N", "M", "K"};
  return d.to_string([](int32_t id) { return std::string(kNames[id]); });
}

TEST(SymDim, StaticValuesBehaveLikeNumbers) {
  const SymDim a = 6;
  EXPECT_TRUE(a.is_static());
  EXPECT_EQ(a.as_static(), 6);
  EXPECT_EQ((a * SymDim(7) - SymDim(2)).as_static(), 40);
  EXPECT_EQ(text(SymDim(-3)), "-3");
  EXPECT_FALSE(a.as_symbol());
}

TEST(SymDim, SymbolsAndPrinting) {
  EXPECT_EQ(N.as_symbol(), 0);
  EXPECT_FALSE(N.is_static());
  EXPECT_EQ(text(N), "N");
  EXPECT_EQ(text(N * SymDim(2)), "N*2");
  EXPECT_EQ(text(SymDim(2) * N), "N*2");
  EXPECT_EQ(text(N * M + SymDim(3)), "N*M+3");
  EXPECT_EQ(text(N - SymDim(1)), "N-1");
  EXPECT_EQ(text(SymDim(4) - N), "-N+4");
  EXPECT_EQ(text(N - M * SymDim(2)), "N-M*2");
  EXPECT_EQ(text(N * N), "N*N");
  EXPECT_FALSE((N * SymDim(2)).as_symbol());
  EXPECT_FALSE((N + SymDim(1)).as_symbol());
}

TEST(SymDim, NormalizesToCanonicalPolynomials) {
  EXPECT_EQ(N + M, M + N);
  EXPECT_EQ(N * M, M * N);
  EXPECT_EQ(N + N, N * SymDim(2));
  EXPECT_EQ((N + SymDim(1)) * (N - SymDim(1)), N * N - SymDim(1));
  EXPECT_EQ(N * SymDim(6) * SymDim(6) * SymDim(8), N * SymDim(288));
  // Like terms cancel to a static value, with no zero terms left behind.
  const SymDim zero = (N + M) - (M + N);
  EXPECT_TRUE(zero.is_static());
  EXPECT_EQ(zero.as_static(), 0);
  EXPECT_TRUE(((N * SymDim(3)) * SymDim(0)).terms().empty());
  // Terms are sorted by their symbol lists.
  const SymDim p = K + N * M + N;
  ASSERT_EQ(p.terms().size(), 3u);
  EXPECT_EQ(p.terms()[0].symbols, std::vector<int32_t>{0});
  EXPECT_EQ(p.terms()[1].symbols, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(p.terms()[2].symbols, std::vector<int32_t>{2});
}

TEST(DimEqual, ThreeValued) {
  EXPECT_EQ(dim_equal(int64_t(3), int64_t(3)), Tri::kYes);
  EXPECT_EQ(dim_equal(int64_t(3), int64_t(4)), Tri::kNo);
  EXPECT_EQ(dim_equal(SymDim(3), SymDim(3)), Tri::kYes);
  EXPECT_EQ(dim_equal(SymDim(3), SymDim(4)), Tri::kNo);
  EXPECT_EQ(dim_equal(N, N), Tri::kYes);
  EXPECT_EQ(dim_equal(N * SymDim(2), N + N), Tri::kYes);
  EXPECT_EQ(dim_equal(N, N + SymDim(1)), Tri::kNo);
  EXPECT_EQ(dim_equal(N * M + SymDim(2), M * N), Tri::kNo);
  EXPECT_EQ(dim_equal(N, M), Tri::kUnknown);
  EXPECT_EQ(dim_equal(N, SymDim(3)), Tri::kUnknown);
  EXPECT_EQ(dim_equal(N * SymDim(2), N), Tri::kUnknown);  // N = 0
}

TEST(DimEqualOnlyWhenEmpty, StaticMultiplesOfOnePolynomial) {
  EXPECT_TRUE(dim_equal_only_when_empty(N * SymDim(3), N));
  EXPECT_TRUE(dim_equal_only_when_empty(N * SymDim(64), N * SymDim(128)));
  EXPECT_TRUE(dim_equal_only_when_empty((N * M + N) * SymDim(2), N * M + N));
  EXPECT_FALSE(dim_equal_only_when_empty(N, N));
  EXPECT_FALSE(dim_equal_only_when_empty(N, M));
  EXPECT_FALSE(dim_equal_only_when_empty(N * SymDim(3), SymDim(6)));  // N = 2
  EXPECT_FALSE(dim_equal_only_when_empty(N * SymDim(2), N + SymDim(1)));  // N = 1
  EXPECT_FALSE(dim_equal_only_when_empty((N - M) * SymDim(3), N - M));  // N = M
  EXPECT_FALSE(dim_equal_only_when_empty(int64_t(0), int64_t(0)));
}

TEST(DimNeverEqual, Integers) {
  EXPECT_TRUE(dim_never_equal(int64_t(3), int64_t(4)));
  EXPECT_FALSE(dim_never_equal(int64_t(3), int64_t(3)));
}

TEST(DimNeverEqual, NoBindingOfTheSymbolsMakesThemEqual) {
  EXPECT_TRUE(dim_never_equal(N * SymDim(2), SymDim(5)));        // odd against even
  EXPECT_TRUE(dim_never_equal(N * SymDim(2), SymDim(1)));
  EXPECT_TRUE(dim_never_equal(M * SymDim(5), SymDim(3)));
  EXPECT_TRUE(dim_never_equal(SymDim(4), N * SymDim(3)));
  EXPECT_TRUE(dim_never_equal(N * SymDim(4) + M * SymDim(6), SymDim(9)));  // gcd 2
  EXPECT_TRUE(dim_never_equal(N * SymDim(2) + SymDim(1), M * SymDim(2)));  // parity
  EXPECT_TRUE(dim_never_equal(N + SymDim(3), SymDim(1)));        // N + 3 >= 3
  EXPECT_TRUE(dim_never_equal(N * M + N + SymDim(2), SymDim(0)));
  EXPECT_TRUE(dim_never_equal(SymDim(1), N * SymDim(2) + M + SymDim(2)));  // all of a - b negative
  EXPECT_TRUE(dim_never_equal(N, N + SymDim(1)));                // dim_equal's kNo too
  EXPECT_TRUE(dim_never_equal(SymDim(3), SymDim(4)));
}

TEST(DimNeverEqual, SoundWhereSomeBindingMakesThemEqual) {
  EXPECT_FALSE(dim_never_equal(N * SymDim(2), SymDim(6)));   // N = 3
  EXPECT_FALSE(dim_never_equal(N * M, SymDim(7)));           // N = 1, M = 7
  EXPECT_FALSE(dim_never_equal(N + M, SymDim(3)));           // N = 1, M = 2
  EXPECT_FALSE(dim_never_equal(N * N, SymDim(4)));           // N = 2
  EXPECT_FALSE(dim_never_equal(N * N, SymDim(2)));           // no square is 2, but that is not shown
  EXPECT_FALSE(dim_never_equal(N * SymDim(3), N));           // N = 0, the empty case
  EXPECT_FALSE(dim_never_equal(N * SymDim(2) + SymDim(1), SymDim(1)));  // N = 0
  EXPECT_FALSE(dim_never_equal(N * SymDim(2), M * SymDim(3)));  // N = 3, M = 2
  EXPECT_FALSE(dim_never_equal(N - SymDim(1), SymDim(4)));   // N = 5
  EXPECT_FALSE(dim_never_equal(N, M));
  EXPECT_FALSE(dim_never_equal(N, SymDim(1)));
  EXPECT_FALSE(dim_never_equal(N * SymDim(2), N + N));
  EXPECT_FALSE(dim_never_equal(SymDim(3), SymDim(3)));
}

TEST(DimDivExact, Integers) {
  EXPECT_EQ(dim_div_exact(int64_t(12), int64_t(4)), 3);
  EXPECT_FALSE(dim_div_exact(int64_t(12), int64_t(5)));
  EXPECT_FALSE(dim_div_exact(int64_t(12), int64_t(0)));
  EXPECT_EQ(dim_div_exact(int64_t(0), int64_t(7)), 0);
}

TEST(DimDivExact, Polynomials) {
  EXPECT_EQ(dim_div_exact(N * SymDim(288), SymDim(288)), N);
  EXPECT_EQ(dim_div_exact(N * SymDim(6) * SymDim(6) * SymDim(8), SymDim(6) * SymDim(6) * SymDim(8)), N);
  EXPECT_EQ(dim_div_exact(N * SymDim(288), N), SymDim(288));
  EXPECT_EQ(dim_div_exact(N * M, M), N);
  EXPECT_EQ(dim_div_exact(N * SymDim(2) + SymDim(4), SymDim(2)), N + SymDim(2));
  EXPECT_EQ(dim_div_exact(N * M * SymDim(6), N * SymDim(3)), M * SymDim(2));
  EXPECT_EQ(dim_div_exact((N + SymDim(1)) * SymDim(4), N + SymDim(1)), SymDim(4));
  EXPECT_EQ(dim_div_exact(N, N), SymDim(1));
  EXPECT_FALSE(dim_div_exact(N * SymDim(6), SymDim(4)));
  EXPECT_FALSE(dim_div_exact(N * SymDim(2) + SymDim(3), SymDim(2)));
  EXPECT_FALSE(dim_div_exact(N + SymDim(2), N));
  EXPECT_FALSE(dim_div_exact(N * M, K));
  EXPECT_FALSE(dim_div_exact(SymDim(6), N));
  EXPECT_FALSE(dim_div_exact(N, SymDim(0)));
}

TEST(ShapeToString, BothDimKinds) {
  EXPECT_EQ(shape_to_string(std::vector<int64_t>{4, 6, 6, 8}), "[4, 6, 6, 8]");
  EXPECT_EQ(shape_to_string(std::vector<int64_t>{}), "[]");
  const std::vector<SymDim> shape{N, 6, 6, 8};
  EXPECT_EQ(shape_to_string(shape, [](int32_t) { return std::string("N"); }), "[N, 6, 6, 8]");
}

TEST(DimProduct, ElementCounts) {
  EXPECT_EQ(dim_product(std::vector<int64_t>{2, 3, 4}), 24);
  EXPECT_EQ(dim_product(std::vector<int64_t>{}), 1);
  EXPECT_EQ(dim_product(std::vector<SymDim>{N, 6, 6, 8}), N * SymDim(288));
  EXPECT_EQ(dim_product(std::vector<SymDim>{N, 6, 6, 8}, 1), SymDim(288));
}

}  // namespace
}  // namespace sg::ops
