// fully_connected and conv2d_bias on the XNNPACK backend against their reference
// kernels, with constant and non-constant weights, relu, tanh and none, and NaN.
#include <limits>

#include "xnnpack/xnn_common.h"
#include "simd/simd.h"
#include "xnnpack/xnn_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;

ops::Attrs fc_attrs(int64_t act) {
  ops::Attrs a;
  a.values = {ops::AttrValue::Int(act)};
  return a;
}

void check_fully_connected(bool constant_weights, int64_t act, bool with_nan, bool constant_bias) {
  HostTensor w = HostTensor::random(DType::kF32, {7, 5}, 3, -1, 1);
  HostTensor b = HostTensor::random(DType::kF32, {5}, 4, -1, 1);
  std::vector<std::vector<HostTensor>> cases;
  uint32_t seed = 10;
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{3, 7}, {1, 7}, {2, 4, 7}, {0, 7}}) {
    HostTensor x = HostTensor::random(DType::kF32, shape, seed++, -1, 1);
    if (with_nan && x.numel() > 1) x.set(1, std::numeric_limits<double>::quiet_NaN());
    cases.push_back({x, w, b});
  }
  InputInfo xi = info_of(cases[0][0], false, true);
  xi.rank = 2;
  xi.shape[1] = 7;
  compare_cases(OpId::FullyConnected, fc_attrs(act),
                {xi, info_of(cases[0][1], constant_weights), info_of(cases[0][2], constant_bias)}, cases);
}

TEST(XnnpackFused, FullyConnectedConstantWeightsRelu) { check_fully_connected(true, ops::attr::kActRelu, false, true); }
TEST(XnnpackFused, FullyConnectedConstantWeightsNone) { check_fully_connected(true, ops::attr::kActNone, false, true); }
TEST(XnnpackFused, FullyConnectedInputWeightsRelu) { check_fully_connected(false, ops::attr::kActRelu, false, false); }
TEST(XnnpackFused, FullyConnectedKeepsNaNThroughRelu) { check_fully_connected(true, ops::attr::kActRelu, true, true); }
// A bias computed at run time (an RNN's x @ W row): our GEMM adds it in its store, or
// XNNPACK's operator runs and then our epilogue (packed_gemm_isa).
TEST(XnnpackFused, FullyConnectedInputBiasRelu) { check_fully_connected(true, ops::attr::kActRelu, false, false); }
TEST(XnnpackFused, FullyConnectedInputBiasKeepsNaN) { check_fully_connected(true, ops::attr::kActRelu, true, false); }
// tanh: our GEMM then sg:tanh_f32 (XNNPACK's operator has no tanh), or the matmul
// core then the epilogue's bias and tanh passes; NaN stays NaN.
TEST(XnnpackFused, FullyConnectedTanh) {
  for (bool constant_weights : {true, false})
    for (bool constant_bias : {true, false})
      for (bool with_nan : {false, true}) {
        SCOPED_TRACE(::testing::Message() << constant_weights << constant_bias << with_nan);
        check_fully_connected(constant_weights, ops::attr::kActTanh, with_nan, constant_bias);
      }
}

TEST(XnnpackFused, TanhRunsAfterOurGemmOrTheEpilogue) {
  ASSERT_TRUE(xnnpack_init().ok());
  HostTensor x = HostTensor::random(DType::kF32, {3, 40}, 1, -2, 2);
  HostTensor w = HostTensor::random(DType::kF32, {40, 37}, 2, -1, 1);
  HostTensor b = HostTensor::random(DType::kF32, {37}, 3, -1, 1);
  const ops::Attrs tanh = fc_attrs(ops::attr::kActTanh);
  const std::optional<simd::Isa> ours = xnn::packed_gemm_isa(37);
  const std::string core = !ours ? std::string("")
                                 : *ours == simd::Isa::kAvx2 ? "sg:packed_gemm_f32(avx2)"
                                                             : "sg:packed_gemm_f32(avx512)";
  std::vector<HostTensor> in = {x, w, b};
  for (bool constant_bias : {true, false}) {
    const std::vector<InputInfo> infos = {info_of(x, false), info_of(w, true), info_of(b, constant_bias)};
    auto k = xnnpack_prepare(OpId::FullyConnected, tanh, infos);
    ASSERT_NE(k, nullptr);
    if (ours) EXPECT_EQ(k->name(), core + (constant_bias ? "+bias" : "+run_time_bias") + "+sg:tanh_f32");
    else EXPECT_NE(std::string(k->name()).find("+sg:bias+sg:tanh_f32"), std::string::npos) << k->name();
    compare_once(*k, OpId::FullyConnected, tanh, in, nullptr, k->name());
    ThreadPool pool(2);
    compare_once(*k, OpId::FullyConnected, tanh, in, pool.get(), k->name());
  }
  const std::vector<InputInfo> run_time = {info_of(x, false), info_of(w, false), info_of(b, false)};
  auto epilogue = xnnpack_prepare(OpId::FullyConnected, tanh, run_time);
  ASSERT_NE(epilogue, nullptr);
  // Run-time weights: our GEMM packs them in the run (run_time_gemm.cc) where the
  // CPU has its micro-kernels, else the batch matmul and the epilogue.
  if (simd::best_isa() != simd::Isa::kBaseline) {
    EXPECT_NE(std::string(epilogue->name()).find("sg:run_time_gemm_f32("), std::string::npos) << epilogue->name();
  }
  EXPECT_NE(std::string(epilogue->name()).find("+sg:tanh_f32"), std::string::npos) << epilogue->name();
  compare_once(*epilogue, OpId::FullyConnected, tanh, in, nullptr, epilogue->name());
}

// With a constant bias the node is one operator: XNNPACK's, or our GEMM where it is
// the faster on this CPU (packed_gemm_isa). With a bias computed at run time, our
// GEMM adds it in its store; where XNNPACK runs the layer, its matmul runs, then
// our epilogue.
TEST(XnnpackFused, ConstantBiasAndReluRunInsideTheOperator) {
  ASSERT_TRUE(xnnpack_init().ok());
  HostTensor x = HostTensor::random(DType::kF32, {2, 7}, 1, -1, 1);
  HostTensor w = HostTensor::random(DType::kF32, {7, 5}, 2, -1, 1);
  HostTensor b = HostTensor::random(DType::kF32, {5}, 3, -1, 1);
  const ops::Attrs relu = fc_attrs(ops::attr::kActRelu);
  const std::vector<InputInfo> constant_bias = {info_of(x, false), info_of(w, true), info_of(b, true)};
  const std::vector<InputInfo> input_bias = {info_of(x, false), info_of(w, true), info_of(b, false)};
  const std::optional<simd::Isa> ours = xnn::packed_gemm_isa(5);
  const std::string core = !ours ? std::string("xnnpack:fully_connected_nc_f32")
                                 : *ours == simd::Isa::kAvx2 ? "sg:packed_gemm_f32(avx2)"
                                                             : "sg:packed_gemm_f32(avx512)";
  auto whole = xnnpack_prepare(OpId::FullyConnected, relu, constant_bias);
  ASSERT_NE(whole, nullptr);
  EXPECT_EQ(whole->name(), core + "+bias+relu");
  auto epilogue = xnnpack_prepare(OpId::FullyConnected, relu, input_bias);
  ASSERT_NE(epilogue, nullptr);
  EXPECT_EQ(epilogue->name(), ours ? core + "+run_time_bias+relu" : core + "+sg:bias_relu");
  // XNNPACK's operator, whichever kernel the CPU prefers.
  auto theirs = xnn::make_fully_connected(constant_bias, ops::attr::kActRelu, xnn::FcSplit::kXnnpack);
  ASSERT_NE(theirs, nullptr);
  EXPECT_STREQ(theirs->name(), "xnnpack:fully_connected_nc_f32+bias+relu");
  std::vector<HostTensor> in = {x, w, b};
  for (PreparedKernel* k : {whole.get(), epilogue.get(), theirs.get()})
    compare_once(*k, OpId::FullyConnected, relu, in, nullptr, k->name());
}

// Weights of +-2, alternating along the reduced dims, times inputs of 3e38: the
// products overflow to +inf and -inf and their sum is NaN in the reference, which
// XNNPACK's clamp would turn into -inf (or 0 through relu), so the kernel must see
// the overflow coming. The same kernel then runs a small input again (its cached
// setup must still hold).
HostTensor alternating_twos(std::vector<int64_t> shape, int64_t channels) {
  HostTensor w(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < w.numel(); ++i) w.set(i, (i / channels) % 2 == 0 ? 2.0 : -2.0);
  return w;
}

HostTensor filled(std::vector<int64_t> shape, double v) {
  HostTensor t(DType::kF32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, v);
  return t;
}

TEST(XnnpackFused, OverflowingInputsGiveTheReferenceResult) {
  HostTensor w = alternating_twos({16, 24}, 24);
  HostTensor b = HostTensor::random(DType::kF32, {24}, 4, -1, 1);
  HostTensor small = HostTensor::random(DType::kF32, {4, 16}, 5, -1, 1);
  HostTensor huge = filled({4, 16}, 3e38);
  for (int64_t act : {ops::attr::kActNone, ops::attr::kActRelu}) {
    std::vector<std::vector<HostTensor>> cases = {{small, w, b}, {huge, w, b}, {small, w, b}};
    compare_cases(OpId::FullyConnected, fc_attrs(act), {info_of(small, false), info_of(w, true), info_of(b, true)},
                  cases);
  }
  ops::Attrs attrs = conv_attrs({1, 1}, {1, 1}, "VALID", 1);
  attrs.values.push_back(ops::AttrValue::Int(ops::attr::kActRelu));
  HostTensor k = alternating_twos({3, 3, 4, 8}, 8);
  HostTensor kb = HostTensor::random(DType::kF32, {8}, 8, -1, 1);
  HostTensor img = HostTensor::random(DType::kF32, {1, 5, 5, 4}, 9, -1, 1);
  HostTensor hot = filled({1, 5, 5, 4}, 3e38);
  std::vector<std::vector<HostTensor>> cases = {{img, k, kb}, {hot, k, kb}, {img, k, kb}};
  compare_cases(OpId::Conv2DBias, attrs, {info_of(img, false), info_of(k, true), info_of(kb, true)}, cases);
}

TEST(XnnpackFused, SplitWeightsTakeTheirSliceOfTheBias) {
  ASSERT_TRUE(xnnpack_init().ok());
  HostTensor w = HostTensor::random(DType::kF32, {40, 300}, 3, -1, 1);
  HostTensor b = HostTensor::random(DType::kF32, {300}, 4, -1, 1);
  HostTensor a = HostTensor::random(DType::kF32, {6, 40}, 5, -1, 1);
  const std::vector<InputInfo> infos = {info_of(a, false), info_of(w, true), info_of(b, true)};
  std::vector<HostTensor> in = {a, w, b};
  for (xnn::FcSplit mode : {xnn::FcSplit::kNever, xnn::FcSplit::kAlways}) {
    auto k = xnn::make_fully_connected(infos, ops::attr::kActRelu, mode);
    ASSERT_NE(k, nullptr);
    ThreadPool pool(2);
    compare_once(*k, OpId::FullyConnected, fc_attrs(ops::attr::kActRelu), in, pool.get(), k->name());
  }
}

TEST(XnnpackFused, Conv2dBiasRelu) {
  ops::Attrs attrs = conv_attrs({1, 1}, {1, 1}, "SAME", 1);
  attrs.values.push_back(ops::AttrValue::Int(ops::attr::kActRelu));
  HostTensor k = HostTensor::random(DType::kF32, {3, 3, 2, 4}, 5, -1, 1);
  HostTensor b = HostTensor::random(DType::kF32, {4}, 6, -1, 1);
  std::vector<std::vector<HostTensor>> cases;
  uint32_t seed = 20;
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{1, 5, 5, 2}, {2, 7, 4, 2}}) {
    HostTensor x = HostTensor::random(DType::kF32, shape, seed++, -1, 1);
    if (seed == 22) x.set(3, std::numeric_limits<double>::quiet_NaN());
    cases.push_back({x, k, b});
  }
  InputInfo xi = info_of(cases[0][0], false, true);
  xi.shape[3] = 2;
  compare_cases(OpId::Conv2DBias, attrs, {xi, info_of(cases[0][1], true), info_of(cases[0][2], true)}, cases);
}

// A run-time filter: our GEMM packs it on every run (where the CPU has one of its
// instruction sets), with the bias and activation in its store; other CPUs: the reference.
TEST(XnnpackFused, Conv2dBiasWithInputFilter) {
  ops::Attrs attrs = conv_attrs({1, 1}, {1, 1}, "VALID", 1);
  attrs.values.push_back(ops::AttrValue::Int(ops::attr::kActRelu));
  std::vector<std::vector<HostTensor>> cases;
  uint32_t seed = 40;
  for (int c = 0; c < 3; ++c)  // a new filter and bias every run
    cases.push_back({HostTensor::random(DType::kF32, {1, 5, 5, 2}, seed++, -1, 1),
                     HostTensor::random(DType::kF32, {3, 3, 2, 4}, seed++, -1, 1),
                     HostTensor::random(DType::kF32, {4}, seed++, -1, 1)});
  ASSERT_TRUE(xnnpack_init().ok());
  const std::vector<InputInfo> infos = {info_of(cases[0][0], false), info_of(cases[0][1], false),
                                        info_of(cases[0][2], false)};
  if (simd::best_isa() == simd::Isa::kBaseline) {
    EXPECT_EQ(xnnpack_prepare(OpId::Conv2DBias, attrs, infos), nullptr);
    return;
  }
  compare_cases(OpId::Conv2DBias, attrs, infos, cases);
}

}  // namespace
}  // namespace sg::kernels::testing
