// The f32 layer_norm kernel (kernels/xnnpack/layer_norm.cc) against the reference:
// row lengths around every vector width, gamma and beta as vectors or scalars, a
// large mean over a tiny spread (where f32 sums would lose the variance), NaN and
// infinity, rows split over two threads, and other dtypes left to the reference.
#include <cstring>
#include <limits>

#include "xnnpack/xnn_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;

ops::Attrs eps_attrs(double eps) {
  ops::Attrs a;
  a.values = {ops::AttrValue::Float(eps)};
  return a;
}

// Prepares on the first case, runs every case with 1 and 2 threads, and requires the
// reference's result within a few f32 roundings (the sums' order differs).
void expect_layer_norm(std::vector<std::vector<HostTensor>> cases, double eps = 1e-5) {
  const ops::Attrs attrs = eps_attrs(eps);
  std::vector<InputInfo> infos = {info_of(cases[0][0], false, true), info_of(cases[0][1], false, true),
                                  info_of(cases[0][2], false, true)};
  auto k = xnnpack_prepare(OpId::LayerNorm, attrs, infos);
  ASSERT_NE(k, nullptr);
  EXPECT_STREQ(k->name(), "sg:layer_norm_f32");
  compare_cases(OpId::LayerNorm, attrs, infos, cases, 1e-6);
}

std::vector<HostTensor> inputs(std::vector<int64_t> shape, bool scalar_params, uint32_t seed, double lo = -3,
                               double hi = 3) {
  const int64_t d = shape.empty() ? 1 : shape.back();
  const std::vector<int64_t> p = scalar_params ? std::vector<int64_t>{1} : std::vector<int64_t>{d};
  return {HostTensor::random(DType::kF32, shape, seed, lo, hi), HostTensor::random(DType::kF32, p, seed + 1, 0.5, 2),
          HostTensor::random(DType::kF32, p, seed + 2, -1, 1)};
}

TEST(OwnLayerNorm, RowLengthsAroundEveryVectorWidth) {
  std::vector<std::vector<HostTensor>> cases;
  uint32_t seed = 1;
  for (int64_t d : {1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 64, 100, 768})
    cases.push_back(inputs({3, d}, false, seed += 3));
  expect_layer_norm(cases);
}

TEST(OwnLayerNorm, ScalarGammaAndBetaAndHigherRanks) {
  expect_layer_norm({inputs({2, 3, 33}, true, 50), inputs({5, 1}, true, 60), inputs({4, 0, 7}, true, 70)});
}

TEST(OwnLayerNorm, LargeMeanTinySpread) {
  // 1e4 + noise of 1e-2: a float sum of the squares would cancel.
  expect_layer_norm({inputs({4, 257}, false, 80, 1e4 - 1e-2, 1e4 + 1e-2)}, 1e-12);
}

TEST(OwnLayerNorm, ManyRowsOnTwoThreads) {
  expect_layer_norm({inputs({3000, 64}, false, 90), inputs({700, 300}, false, 95)});
}

TEST(OwnLayerNorm, NanAndInfinity) {
  std::vector<HostTensor> in = inputs({3, 20}, false, 100);
  in[0].set(3, std::numeric_limits<double>::quiet_NaN());
  in[0].set(25, std::numeric_limits<double>::infinity());
  expect_layer_norm({in});
}

TEST(OwnLayerNorm, OtherDtypesAreLeftToTheReference) {
  HostTensor x(DType::kF16, {2, 4}), g(DType::kF16, {4}), b(DType::kF16, {4});
  EXPECT_EQ(xnnpack_prepare(OpId::LayerNorm, eps_attrs(1e-5),
                            std::vector<InputInfo>{info_of(x, false), info_of(g, false), info_of(b, false)}),
            nullptr);
}

}  // namespace
}  // namespace sg::kernels::testing
