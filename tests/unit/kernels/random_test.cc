// The `random` op's generator: Threefry-2x32-20 against Random123's published
// known-answer vectors, the float transforms against their definitions, and the
// kernel's draws against the generator, element by element.
#include <bit>
#include <cmath>
#include <limits>
#include <set>

#include "kernels/kernel_tester.h"
#include "reference/random.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;
namespace rnd = sg::kernels::random;
using namespace ops::attr;

// Random123's kat_vectors for threefry2x32 with 20 rounds (counter, key -> result);
// JAX's testThreefry2x32 checks the same three.
TEST(Threefry2x32, Random123KnownAnswers) {
  struct Kat { uint32_t ctr0, ctr1, key0, key1, out0, out1; };
  const Kat kats[] = {
      {0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x6b200159, 0x99ba4efe},
      {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x1cb996fc, 0xbb002be7},
      {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xc4923a9c, 0x483df7a0},
  };
  for (const Kat& k : kats) {
    const rnd::Words w = rnd::threefry2x32(k.key0, k.key1, k.ctr0, k.ctr1);
    EXPECT_EQ(w.w0, k.out0);
    EXPECT_EQ(w.w1, k.out1);
  }
  // The same at compile time (the function is constexpr).
  static_assert(rnd::threefry2x32(0, 0, 0, 0).w0 == 0x6b200159u);
}

TEST(Threefry2x32, CounterIsTheSplit64BitIndex) {
  const rnd::Words a = rnd::draw_words(1, 2, (uint64_t(5) << 32) | 7);
  const rnd::Words b = rnd::threefry2x32(1, 2, 5, 7);
  EXPECT_EQ(a.w0, b.w0);
  EXPECT_EQ(a.w1, b.w1);
}

TEST(RandomTransforms, UniformFromTheHighBits) {
  EXPECT_EQ(rnd::uniform01(0), 0.0f);
  EXPECT_EQ(rnd::uniform01(0xffffffffu), 1.0f - 0x1p-23f);  // the largest draw is below 1
  EXPECT_EQ(rnd::uniform01(0x80000000u), 0.5f);
  EXPECT_EQ(rnd::uniform01(0x000001ffu), 0.0f);  // the 9 low bits are dropped
  EXPECT_EQ(rnd::uniform01(0x00000200u), 0x1p-23f);
  // JAX's uniform on [lo, hi): max(lo, u * (hi - lo) + lo).
  EXPECT_EQ(rnd::uniform_in(0, -0x1.fffffep-1f, 1.0f), -0x1.fffffep-1f);
  EXPECT_EQ(rnd::uniform_in(0, 0x1p-126f, 1.0f), 0x1p-126f);
  EXPECT_EQ(rnd::uniform_in(0x80000000u, 2.0f, 4.0f), 3.0f);
}

TEST(RandomTransforms, LogIsAccurate) {
  EXPECT_EQ(rnd::log_f32(1.0f), 0.0f);
  EXPECT_EQ(rnd::log_f32(2.0f), 0x1.62e430p-1f);  // ln 2 rounded to f32
  // Within 1 ulp of the correctly rounded log over the normal floats it is used on.
  for (float x : {0x1p-126f, 1e-30f, 1e-7f, 0.1f, 0.5f, 0.999f, 1.0f - 0x1p-24f, 1.0f + 0x1p-23f, 3.0f, 87.3f,
                  1e10f, 3e38f}) {
    const double want = std::log(double(x));
    const float got = rnd::log_f32(x);
    const double ulp = double(std::nextafter(float(std::fabs(want)), 1e38f)) - std::fabs(float(want));
    EXPECT_LE(std::fabs(double(got) - want), ulp * 1.0 + 1e-45) << "log(" << x << ")";
  }
}

TEST(RandomTransforms, ErfinvInvertsErf) {
  for (float x : {-0.99999994f, -0.9f, -0.5f, -1e-3f, 0.0f, 1e-6f, 0.3f, 0.7f, 0.99f, 0.9999f}) {
    const float y = rnd::erfinv_f32(x);
    EXPECT_NEAR(std::erf(double(y)), double(x), 2e-7) << "erfinv(" << x << ") = " << y;
  }
  EXPECT_EQ(rnd::erfinv_f32(0.0f), 0.0f);
  EXPECT_EQ(rnd::erfinv_f32(-0.25f), -rnd::erfinv_f32(0.25f));
}

TEST(RandomTransforms, DistributionsAreFiniteAtTheirExtremes) {
  for (uint32_t b : {0u, 1u, 0x1ffu, 0x200u, 0x7fffffffu, 0x80000000u, 0xfffffdffu, 0xffffffffu}) {
    EXPECT_TRUE(std::isfinite(rnd::normal_from_bits(b))) << b;
    EXPECT_TRUE(std::isfinite(rnd::gumbel_from_bits(b))) << b;
  }
  EXPECT_LT(rnd::normal_from_bits(0), -5.0f);  // u = nextafter(-1, 0): the far left tail
  EXPECT_GT(rnd::normal_from_bits(0xffffffffu), 5.0f);
  EXPECT_NEAR(rnd::normal_from_bits(0x80000000u), 0.0f, 1e-6f);  // u just above 0
}

HostTensor key_of(int64_t k0, int64_t k1) { return HostTensor::of(DType::kI64, {2}, {double(k0), double(k1)}); }

KernelTester draw(int64_t dist, std::vector<int64_t> shape, DType out, std::vector<int64_t> out_shape) {
  KernelTester t(OpId::Random);
  t.in(key_of(0, 42)).out(out, std::move(out_shape)).attr_ints(std::move(shape)).attr_int(dist);
  return t;
}

TEST(RandomKernel, EachDistributionIsItsTransformOfTheBits) {
  const int64_t n = 257;
  for (int64_t dist : {kBits, kUniform, kNormal, kGumbel}) {
    KernelTester t = draw(dist, {n}, dist == kBits ? DType::kI64 : DType::kF32, {n});
    ASSERT_TRUE(t.run().ok());
    for (int64_t i = 0; i < n; ++i) {
      const rnd::Words w = rnd::draw_words(0, 42, uint64_t(i));
      const uint32_t bits = w.w0 ^ w.w1;
      if (dist == kBits) {
        EXPECT_EQ(t.output().at_int(i), int64_t(bits));
        continue;
      }
      const float want = dist == kUniform ? rnd::uniform01(bits)
                         : dist == kNormal ? rnd::normal_from_bits(bits)
                                           : rnd::gumbel_from_bits(bits);
      EXPECT_EQ(std::bit_cast<uint32_t>(float(t.output().at(i))), std::bit_cast<uint32_t>(want)) << i;
    }
  }
}

TEST(RandomKernel, KeysAreBothWordsAndDistinct) {
  KernelTester t = draw(kKeys, {3, 2}, DType::kI64, {3, 2, 2});
  ASSERT_TRUE(t.run().ok());
  std::set<std::pair<int64_t, int64_t>> seen;
  for (int64_t i = 0; i < 6; ++i) {
    const rnd::Words w = rnd::draw_words(0, 42, uint64_t(i));
    EXPECT_EQ(t.output().at_int(2 * i), int64_t(w.w0));
    EXPECT_EQ(t.output().at_int(2 * i + 1), int64_t(w.w1));
    seen.insert({t.output().at_int(2 * i), t.output().at_int(2 * i + 1)});
  }
  EXPECT_EQ(seen.size(), 6u);
}

TEST(RandomKernel, OnlyTheLow32BitsOfEachKeyWordCount) {
  KernelTester a(OpId::Random), b(OpId::Random);
  a.in(key_of(int64_t(1) << 32 | 3, -1)).out(DType::kI64, {4}).attr_ints({4}).attr_int(kBits);
  b.in(key_of(3, 0xffffffff)).out(DType::kI64, {4}).attr_ints({4}).attr_int(kBits);
  ASSERT_TRUE(a.run().ok());
  ASSERT_TRUE(b.run().ok());
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(a.output().at_int(i), b.output().at_int(i));
}

TEST(RandomKernel, UniformMomentsAndRange) {
  const int64_t n = 100000;
  KernelTester t = draw(kUniform, {n}, DType::kF32, {n});
  ASSERT_TRUE(t.run().ok());
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double u = t.output().at(i);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / double(n), 0.5, 0.005);
}

TEST(RandomKernel, NormalMoments) {
  const int64_t n = 100000;
  KernelTester t = draw(kNormal, {n}, DType::kF32, {n});
  ASSERT_TRUE(t.run().ok());
  double s1 = 0, s2 = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double x = t.output().at(i);
    s1 += x;
    s2 += x * x;
  }
  EXPECT_NEAR(s1 / double(n), 0.0, 0.01);
  EXPECT_NEAR(s2 / double(n), 1.0, 0.02);
}

TEST(RandomKernel, BadKeyIsAnError) {
  KernelTester t(OpId::Random);
  t.in(HostTensor::of(DType::kI32, {2}, {0, 1})).out(DType::kF32, {2}).attr_ints({2}).attr_int(kUniform);
  EXPECT_EQ(t.run().code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace sg::kernels::testing
