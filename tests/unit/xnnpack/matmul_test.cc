// matmul on the XNNPACK backend: fully connected (constant rank-2 right operand,
// one operator or split into 128-channel operators) and our own batch GEMM.
#include <limits>

#include "xnnpack/xnn_common.h"
#include "xnnpack/xnn_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;

std::vector<std::vector<HostTensor>> with_weights(const std::vector<std::vector<int64_t>>& a_shapes,
                                                  const HostTensor& w) {
  std::vector<std::vector<HostTensor>> cases;
  uint32_t seed = 300;
  for (const auto& s : a_shapes) {
    std::vector<HostTensor> c;
    c.push_back(HostTensor::random(DType::kF32, s, seed++, -1, 1));
    c.push_back(w);
    cases.push_back(std::move(c));
  }
  return cases;
}

TEST(XnnpackFullyConnected, LeadingDimsBecomeTheBatch) {
  HostTensor w = HostTensor::random(DType::kF32, {7, 9}, 1, -1, 1);
  auto cases = with_weights({{5, 7}, {2, 3, 7}, {7}, {0, 7}, {1, 7}, {4, 0, 7}, {64, 7}, {5, 7}}, w);
  InputInfo a = info_of(cases[0][0], false, true);
  a.shape[a.rank - 1] = 7;
  compare_cases(OpId::MatMul, {}, {a, info_of(cases[0][1], true)}, cases);
}

TEST(XnnpackFullyConnected, LargeWeightsAreSplitWithATail) {
  // 300 x 1000 floats = 1.2 MB: split into 7 operators of 128 and one of 104.
  HostTensor w = HostTensor::random(DType::kF32, {300, 1000}, 2, -1, 1);
  auto cases = with_weights({{3, 300}, {1, 300}, {300}, {33, 300}}, w);
  const std::vector<InputInfo> infos = {info_of(cases[0][0], false, true), info_of(cases[0][1], true)};
  ASSERT_TRUE(xnnpack_init().ok());
  // XNNPACK's own choice (kAuto would take our packed GEMM on AVX-512).
  auto k = xnn::make_fully_connected(infos, ops::attr::kActNone, xnn::FcSplit::kXnnpack);
  ASSERT_NE(k, nullptr);
  EXPECT_STREQ(k->name(), "xnnpack:fully_connected_nc_f32(split)");
  EXPECT_GE(k->memory_bytes(), size_t(300 * 1000 * 4));
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    for (auto& c : cases) compare_once(*k, OpId::MatMul, {}, c, pool.get(), shape_string(c[0].shape()));
  }
  // The same layer through xnnpack_prepare, whichever kernel it chose.
  compare_cases(OpId::MatMul, {}, infos, cases);
}

TEST(XnnpackFullyConnected, SplitAndUnsplitAgree) {
  ASSERT_TRUE(xnnpack_init().ok());
  HostTensor w = HostTensor::random(DType::kF32, {40, 300}, 3, -1, 1);
  HostTensor a = HostTensor::random(DType::kF32, {6, 40}, 4, -1, 1);
  const std::vector<InputInfo> infos = {info_of(a, false), info_of(w, true)};
  std::vector<HostTensor> in = {a, w};
  for (xnn::FcSplit mode : {xnn::FcSplit::kNever, xnn::FcSplit::kAlways}) {
    auto k = xnn::make_fully_connected(infos, ops::attr::kActNone, mode);
    ASSERT_NE(k, nullptr);
    ThreadPool pool(2);
    compare_once(*k, OpId::MatMul, {}, in, pool.get(), k->name());
  }
}

TEST(XnnpackFullyConnected, WeightsAreCopiedAtPrepare) {
  ASSERT_TRUE(xnnpack_init().ok());
  HostTensor w = HostTensor::random(DType::kF32, {4, 3}, 5, -1, 1);
  HostTensor a = HostTensor::random(DType::kF32, {2, 4}, 6, -1, 1);
  auto k = xnnpack_prepare(OpId::MatMul, {}, std::vector<InputInfo>{info_of(a, false), info_of(w, true)});
  ASSERT_NE(k, nullptr);
  std::vector<HostTensor> in = {a, w};  // the reference's copy of the original weights
  for (int64_t i = 0; i < w.numel(); ++i) w.set(i, 1e6);
  compare_once(*k, OpId::MatMul, {}, in, nullptr, "after the constant changed");
}

// NaN and -inf reach the output as in NumPy (XNNPACK alone would give -inf for
// NaN: the kernel recomputes such outputs with the reference).
TEST(XnnpackFullyConnected, NanAndInfinity) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  HostTensor w = HostTensor::of(DType::kF32, {2, 3}, {1, 0, -1, 2, 1, 0});
  std::vector<std::vector<HostTensor>> cases(1);
  cases[0].push_back(HostTensor::of(DType::kF32, {4, 2}, {nan, 1, inf, 0, 1, -inf, 1, 2}));
  cases[0].push_back(w);
  compare_cases(OpId::MatMul, {}, {info_of(cases[0][0], false), info_of(cases[0][1], true)}, cases);
}

TEST(XnnpackFullyConnected, EmptyInnerDimIsLeftToTheReference) {
  ASSERT_TRUE(xnnpack_init().ok());
  HostTensor w = HostTensor::random(DType::kF32, {0, 3}, 5);
  HostTensor a = HostTensor::random(DType::kF32, {2, 0}, 6);
  EXPECT_EQ(xnnpack_prepare(OpId::MatMul, {}, std::vector<InputInfo>{info_of(a, false), info_of(w, true)}), nullptr);
}

// ---- our GEMM ----------------------------------------------------------------

struct Pair {
  std::vector<int64_t> a, b;
};

void compare_gemm(const std::vector<Pair>& pairs, bool constant_b) {
  std::vector<std::vector<HostTensor>> cases;
  uint32_t seed = 400;
  for (const Pair& p : pairs) {
    std::vector<HostTensor> c;
    c.push_back(HostTensor::random(DType::kF32, p.a, seed++, -1, 1));
    c.push_back(HostTensor::random(DType::kF32, p.b, seed++, -1, 1));
    cases.push_back(std::move(c));
  }
  // Ranks vary between cases here: the kernel takes whatever shapes it is given.
  InputInfo b = info_of(cases[0][1], constant_b, true);
  if (constant_b) b.rank = 3;  // a constant but not rank 2: still our GEMM
  compare_cases(OpId::MatMul, {}, {info_of(cases[0][0], false, true), b}, cases);
}

TEST(XnnpackBatchMatMul, ShapesTailsAndBroadcasting) {
  compare_gemm({{{3, 4}, {4, 5}},
                {{2, 3, 4}, {4, 5}},
                {{2, 3, 4}, {2, 4, 5}},
                {{2, 1, 3, 4}, {5, 4, 6}},
                {{4}, {4, 5}},
                {{3, 4}, {4}},
                {{4}, {4}},
                {{2, 4}, {3, 4, 2}},
                {{5}, {2, 5, 3}},
                {{2, 3, 0}, {0, 5}},
                {{1, 3, 4}, {0, 4, 5}},
                {{37, 70}, {70, 45}},
                {{130, 300}, {300, 600}},
                {{1, 33}, {33, 257}},
                {{3, 17, 9}, {3, 9, 65}},
                {{3, 4}, {4, 5}}},
               false);
}

TEST(XnnpackBatchMatMul, ConstantOfRankThree) { compare_gemm({{{2, 3, 8}, {2, 8, 40}}, {{3, 8}, {2, 8, 40}}}, true); }

TEST(XnnpackBatchMatMul, MismatchedShapesGiveTheReferenceError) {
  ASSERT_TRUE(xnnpack_init().ok());
  HostTensor a = HostTensor::random(DType::kF32, {2, 3}, 1), b = HostTensor::random(DType::kF32, {4, 5}, 2);
  HostTensor o(DType::kF32, {2, 5});
  auto k = xnnpack_prepare(OpId::MatMul, {}, std::vector<InputInfo>{info_of(a, false), info_of(b, false)});
  ASSERT_NE(k, nullptr);
  const TensorRef in[2] = {a.ref(), b.ref()};
  TensorRef out = o.ref();
  const Status s = k->run({}, in, std::span<TensorRef>(&out, 1));
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("matmul"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace sg::kernels::testing
