// Unary, binary (broadcasting) and softmax kernels of the XNNPACK backend against
// the reference kernels.
#include <cstring>
#include <limits>

#include "xnnpack/xnn_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<HostTensor> one(std::vector<int64_t> shape, uint32_t seed, double lo = -6, double hi = 6) {
  std::vector<HostTensor> v;
  v.push_back(HostTensor::random(DType::kF32, std::move(shape), seed, lo, hi));
  return v;
}

// Every unary op on shapes that change between runs of one prepared kernel,
// including 0-d, empty, and more than one threadpool tile.
class UnaryTest : public ::testing::TestWithParam<OpId> {};

TEST_P(UnaryTest, MatchesReferenceAcrossShapes) {
  const OpId op = GetParam();
  std::vector<std::vector<HostTensor>> cases;
  const std::vector<std::vector<int64_t>> shapes = {{3, 5, 17}, {}, {0}, {1}, {7}, {2, 0, 3}, {3, 5000}, {33}};
  uint32_t seed = 1;
  for (const auto& shape : shapes) cases.push_back(one(shape, seed++));
  HostTensor probe = cases[0][0];
  // The reference gelu forms 1 + erf(x/sqrt(2)) in f32, which loses up to ~3e-4
  // relative where the sum is small (x < -3); ours is accurate there (see
  // OwnActivationsAccuracy), so a lone such element differs by that much.
  const double rel = op == OpId::Gelu ? 1e-3 : 1e-4;
  compare_cases(op, {}, {info_of(probe, false, /*symbolic=*/true)}, cases, rel);
}

TEST_P(UnaryTest, SpecialValues) {
  const OpId op = GetParam();
  std::vector<std::vector<HostTensor>> cases(1);
  cases[0].push_back(HostTensor::of(DType::kF32, {12},
                                    {0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -2.5, 1e-3, -1e-5, 20.0, -20.0, 1e-30}));
  compare_cases(op, {}, {info_of(cases[0][0], false)}, cases);
}

INSTANTIATE_TEST_SUITE_P(Ops, UnaryTest,
                         ::testing::Values(OpId::Abs, OpId::Neg, OpId::Square, OpId::Sqrt, OpId::Floor, OpId::Ceil,
                                           OpId::Round, OpId::Relu, OpId::Sigmoid, OpId::Tanh, OpId::Gelu),
                         [](const auto& p) { return std::string(ops::op_def(p.param).name); });

// NaN and infinities propagate as in the reference (NumPy) for the ops where
// XNNPACK's results are defined on them.
TEST(XnnpackUnary, NanAndInfinity) {
  for (OpId op : {OpId::Abs, OpId::Neg, OpId::Square, OpId::Floor, OpId::Ceil, OpId::Round, OpId::Sigmoid,
                  OpId::Relu, OpId::Tanh, OpId::Gelu, OpId::Sqrt}) {
    std::vector<std::vector<HostTensor>> cases(1);
    cases[0].push_back(HostTensor::of(DType::kF32, {6}, {kNaN, kInf, -kInf, 1.0, -1.0, kNaN}));
    SCOPED_TRACE(ops::op_def(op).name);
    compare_cases(op, {}, {info_of(cases[0][0], false)}, cases);
  }
}

// Round is banker's rounding, as np.round.
TEST(XnnpackUnary, RoundHalfToEven) {
  ASSERT_TRUE(xnnpack_init().ok());
  HostTensor x = HostTensor::of(DType::kF32, {6}, {0.5, 1.5, 2.5, -0.5, -1.5, 3.5});
  HostTensor y(DType::kF32, {6});
  auto k = xnnpack_prepare(OpId::Round, {}, std::vector<InputInfo>{info_of(x, false)});
  ASSERT_NE(k, nullptr);
  TensorRef in = x.ref(), out = y.ref();
  ASSERT_TRUE(k->run({}, std::span<const TensorRef>(&in, 1), std::span<TensorRef>(&out, 1)).ok());
  EXPECT_EQ(y.values(), (std::vector<double>{0, 2, 2, -0.0, -2, 4}));
}

// Our own tanh and gelu against float64 over a dense grid on [-10, 10]: to 1e-6
// relative (SPEC's 1e-4 is the requirement; this guards the approximations
// themselves, including gelu's tiny negative tail).
TEST(XnnpackUnary, OwnActivationsAccuracy) {
  ASSERT_TRUE(xnnpack_init().ok());
  const int64_t n = 200001;
  HostTensor x(DType::kF32, {n});
  for (int64_t i = 0; i < n; ++i) x.set(i, -10.0 + 20.0 * double(i) / double(n - 1));
  for (OpId op : {OpId::Tanh, OpId::Gelu}) {
    HostTensor y(DType::kF32, {n});
    auto k = xnnpack_prepare(op, {}, std::vector<InputInfo>{info_of(x, false)});
    ASSERT_NE(k, nullptr);
    TensorRef in = x.ref(), out = y.ref();
    ASSERT_TRUE(k->run({}, std::span<const TensorRef>(&in, 1), std::span<TensorRef>(&out, 1)).ok());
    double worst = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double v = x.at(i);
      if (op == OpId::Tanh) {
        const double want = std::tanh(v);
        if (want != 0) worst = std::max(worst, std::fabs(y.at(i) - want) / std::fabs(want));
      } else {
        const double want = 0.5 * v * std::erfc(-v / std::sqrt(2.0));
        if (want != 0) worst = std::max(worst, std::fabs(y.at(i) - want) / std::fabs(want));
      }
    }
    EXPECT_LT(worst, 1e-6) << ops::op_def(op).name;
  }
}

// An element's tanh or gelu does not depend on where it lies: three values alone
// (the tail of every vector width) give the bytes they get inside full vectors of
// a 4,095-value array. The tail ran scalar code, which rounds differently: tanh
// near its clamp at 7.905 gave 1.0 there and 0.99999976 in a vector.
TEST(XnnpackUnary, OwnActivationsGiveTheSameBytesInTheTail) {
  ASSERT_TRUE(xnnpack_init().ok());
  constexpr int64_t n = 4095, len = 3;
  HostTensor x = HostTensor::random(DType::kF32, {n}, 17, -10, 10);
  HostTensor part(DType::kF32, {len}), tail(DType::kF32, {len}), whole(DType::kF32, {n});
  for (OpId op : {OpId::Tanh, OpId::Gelu}) {
    auto all = xnnpack_prepare(op, {}, std::vector<InputInfo>{info_of(x, false)});
    auto three = xnnpack_prepare(op, {}, std::vector<InputInfo>{info_of(part, false)});
    ASSERT_NE(all, nullptr);
    ASSERT_NE(three, nullptr);
    TensorRef in = x.ref(), out = whole.ref();
    ASSERT_TRUE(all->run({}, std::span<const TensorRef>(&in, 1), std::span<TensorRef>(&out, 1)).ok());
    int mismatches = 0;
    for (int64_t start = 0; start + len <= n; start += len) {
      for (int64_t i = 0; i < len; ++i) part.set(i, x.at(start + i));
      TensorRef pin = part.ref(), pout = tail.ref();
      ASSERT_TRUE(three->run({}, std::span<const TensorRef>(&pin, 1), std::span<TensorRef>(&pout, 1)).ok());
      for (int64_t i = 0; i < len; ++i)
        if (tail.at(i) != whole.at(start + i) && ++mismatches <= 3)
          ADD_FAILURE() << ops::op_def(op).name << "(" << part.at(i) << "): " << tail.at(i) << " alone, "
                        << whole.at(start + i) << " in a vector";
    }
    EXPECT_EQ(mismatches, 0) << ops::op_def(op).name;
  }
}

// ---- binary ------------------------------------------------------------------

class BinaryTest : public ::testing::TestWithParam<OpId> {};

TEST_P(BinaryTest, BroadcastingShapesInOneKernel) {
  const OpId op = GetParam();
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> pairs = {
      {{2, 3}, {2, 3}},
      {{2, 3, 4}, {4}},
      {{4, 1, 3}, {5, 1}},
      {{}, {3, 4}},
      {{3, 4}, {}},
      {{1}, {1}},
      {{}, {}},
      {{2, 0, 3}, {3}},
      {{0}, {1}},
      {{3, 1, 5}, {1, 4, 1}},
      {{1, 1, 7}, {2, 3, 1}},
      // 7 dims that do not coalesce below XNNPACK's 6: the reference runs them.
      {{2, 1, 2, 1, 2, 1, 2}, {1, 2, 1, 2, 1, 2, 1}},
      // 8 dims that coalesce.
      {{1, 2, 3, 4, 1, 1, 2, 3}, {1, 1, 1, 4, 1, 1, 1, 3}},
      {{1000, 37}, {37}},
      // One flat row: equal shapes or one value, up to 4,096 elements, with a tail.
      {{19}, {1}},
      {{1, 1, 1}, {2, 9}},
      {{4096}, {4096}},
      {{4097}, {4097}},
      {{1, 19}, {19}},
  };
  std::vector<std::vector<HostTensor>> cases;
  uint32_t seed = 10;
  for (const auto& [sa, sb] : pairs) {
    std::vector<HostTensor> c;
    // Divisors away from zero so that div stays in range.
    c.push_back(HostTensor::random(DType::kF32, sa, seed++, -3, 3));
    c.push_back(HostTensor::random(DType::kF32, sb, seed++, 0.5, 3));
    cases.push_back(std::move(c));
  }
  InputInfo a = info_of(cases[0][0], false, true), b = info_of(cases[0][1], false, true);
  a.rank = b.rank = 2;
  compare_cases(op, {}, {a, b}, cases);
}

TEST_P(BinaryTest, NanAndInfinity) {
  const OpId op = GetParam();
  std::vector<std::vector<HostTensor>> cases(1);
  cases[0].push_back(HostTensor::of(DType::kF32, {6}, {kNaN, 1.0, kInf, -kInf, kNaN, 2.0}));
  cases[0].push_back(HostTensor::of(DType::kF32, {6}, {1.0, kNaN, 1.0, kInf, kNaN, -kInf}));
  compare_cases(op, {}, {info_of(cases[0][0], false), info_of(cases[0][1], false)}, cases);
}

// The fixed runs a frame plan takes in place of run() (kernel.h): exactly for one
// flat row (equal shapes or one value, 1 to 4,096 elements), with run()'s bytes,
// NaN and infinities included; none for a broadcast that needs the plan, a large
// or an empty output.
TEST_P(BinaryTest, FixedRunsAreTheFlatRows) {
  const OpId op = GetParam();
  ASSERT_TRUE(xnnpack_init().ok());
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> fixed = {
      {{16}, {16}}, {{16}, {}}, {{}, {19}}, {{}, {}}, {{1, 1}, {3, 5}}, {{4096}, {4096}}, {{2, 7}, {2, 7}}};
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> not_fixed = {
      {{2, 3}, {3}}, {{4097}, {4097}}, {{0}, {0}}, {{3, 1}, {1, 3}}, {{2}, {2, 1}}};
  HostTensor declared(DType::kF32, {16});
  std::unique_ptr<PreparedKernel> kernel =
      xnnpack_prepare(op, {}, std::vector<InputInfo>{info_of(declared, false), info_of(declared, false)});
  ASSERT_NE(kernel, nullptr);
  uint32_t seed = 70;
  for (const auto& [sa, sb] : fixed) {
    const std::string what = std::string(ops::op_def(op).name) + " " + shape_string(sa) + " " + shape_string(sb);
    std::vector<HostTensor> in;
    in.push_back(HostTensor::random(DType::kF32, sa, seed++, -3, 3));
    in.push_back(HostTensor::random(DType::kF32, sb, seed++, 0.5, 3));
    if (in[0].numel() > 2) in[0].set(1, kNaN), in[0].set(2, kInf);
    const std::vector<int64_t> shape = infer_shape(op, {}, in);
    HostTensor want(DType::kF32, shape), got(DType::kF32, shape);
    want.poison();
    got.poison();
    const TensorRef ins[2] = {in[0].ref(), in[1].ref()};
    TensorRef w = want.ref();
    ASSERT_TRUE(kernel->run({}, std::span<const TensorRef>(ins), std::span<TensorRef>(&w, 1)).ok()) << what;
    const TensorRef operands[3] = {in[0].ref(), in[1].ref(), got.ref()};
    const FixedRun run = kernel->fix(std::span<const TensorRef>(operands, 2), std::span<const TensorRef>(operands + 2, 1));
    ASSERT_NE(run.fn, nullptr) << what;
    run.fn(run.word, operands);
    EXPECT_EQ(std::memcmp(got.ref().data, w.data, size_t(want.numel()) * 4), 0) << what;
    EXPECT_TRUE(got.guard_intact()) << what;
  }
  for (const auto& [sa, sb] : not_fixed) {
    HostTensor a(DType::kF32, sa), b(DType::kF32, sb);
    std::vector<HostTensor> in;
    in.push_back(HostTensor(DType::kF32, sa));
    in.push_back(HostTensor(DType::kF32, sb));
    HostTensor o(DType::kF32, infer_shape(op, {}, in));
    const TensorRef operands[3] = {a.ref(), b.ref(), o.ref()};
    EXPECT_EQ(kernel->fix(std::span<const TensorRef>(operands, 2), std::span<const TensorRef>(operands + 2, 1)).fn,
              nullptr)
        << shape_string(sa) << " " << shape_string(sb);
  }
  HostTensor i(DType::kI32, {4}), o(DType::kI32, {4});
  const TensorRef ints[3] = {i.ref(), i.ref(), o.ref()};
  EXPECT_EQ(kernel->fix(std::span<const TensorRef>(ints, 2), std::span<const TensorRef>(ints + 2, 1)).fn, nullptr);
}

INSTANTIATE_TEST_SUITE_P(Ops, BinaryTest,
                         ::testing::Values(OpId::Add, OpId::Sub, OpId::Mul, OpId::Div, OpId::Maximum, OpId::Minimum),
                         [](const auto& p) { return std::string(ops::op_def(p.param).name); });

// ---- softmax -----------------------------------------------------------------

TEST(XnnpackSoftmax, LastAxisWithChangingChannels) {
  // One prepared kernel per rank (a node's rank is static); the last dim changes.
  const std::vector<std::vector<std::vector<int64_t>>> by_rank = {
      {{9}, {300}, {1}, {0}},
      {{3, 7}, {3, 7}, {5, 1}, {4, 0}, {0, 4}, {1000, 10}, {3, 7}},
      {{2, 3, 100}, {1, 1, 5}, {2, 0, 3}}};
  uint32_t seed = 30;
  for (const auto& shapes : by_rank) {
    std::vector<std::vector<HostTensor>> cases;
    for (const auto& s : shapes) cases.push_back(one(s, seed++, -20, 20));
    const int64_t axis = int64_t(shapes[0].size()) - 1;
    compare_cases(OpId::Softmax, axis_attrs(axis), {info_of(cases[0][0], false, true)}, cases);
  }
}

TEST(XnnpackSoftmax, NanAndInfinity) {
  std::vector<std::vector<HostTensor>> cases(1);
  cases[0].push_back(HostTensor::of(DType::kF32, {3, 4}, {kNaN, 1, 2, 3, -kInf, 0, 1, 2, kInf, 0, 1, 2}));
  compare_cases(OpId::Softmax, axis_attrs(1), {info_of(cases[0][0], false)}, cases);
}

TEST(XnnpackSoftmax, OtherAxesAndDtypesAreLeftToTheReference) {
  ASSERT_TRUE(xnnpack_init().ok());
  HostTensor x = HostTensor::random(DType::kF32, {3, 4}, 1);
  EXPECT_EQ(xnnpack_prepare(OpId::Softmax, axis_attrs(0), std::vector<InputInfo>{info_of(x, false)}), nullptr);
  HostTensor h = HostTensor::random(DType::kF16, {3, 4}, 1);
  EXPECT_EQ(xnnpack_prepare(OpId::Softmax, axis_attrs(1), std::vector<InputInfo>{info_of(h, false)}), nullptr);
  EXPECT_EQ(xnnpack_prepare(OpId::Add, {}, std::vector<InputInfo>{info_of(h, false), info_of(h, false)}), nullptr);
  HostTensor i = HostTensor::random(DType::kI32, {3, 4}, 1);
  EXPECT_EQ(xnnpack_prepare(OpId::Abs, {}, std::vector<InputInfo>{info_of(i, false)}), nullptr);
  // Ops this backend does not cover.
  EXPECT_EQ(xnnpack_prepare(OpId::Exp, {}, std::vector<InputInfo>{info_of(x, false)}), nullptr);
  EXPECT_EQ(xnnpack_prepare(OpId::Pow, {}, std::vector<InputInfo>{info_of(x, false), info_of(x, false)}), nullptr);
  // f32 comparisons are covered (simd/select.cc); integer ones are not.
  EXPECT_EQ(xnnpack_prepare(OpId::Less, {}, std::vector<InputInfo>{info_of(i, false), info_of(i, false)}), nullptr);
}

TEST(XnnpackBackend, InitIsIdempotentAndPoolsOfOneThreadAreNull) {
  EXPECT_TRUE(xnnpack_init().ok());
  EXPECT_TRUE(xnnpack_init().ok());
  EXPECT_EQ(xnnpack_create_threadpool(1), nullptr);
  EXPECT_EQ(xnnpack_create_threadpool(0), nullptr);
  void* pool = xnnpack_create_threadpool(2);
  EXPECT_NE(pool, nullptr);
  xnnpack_destroy_threadpool(pool);
  xnnpack_destroy_threadpool(nullptr);
}

}  // namespace
}  // namespace sg::kernels::testing
