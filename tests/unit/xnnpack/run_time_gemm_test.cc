// Dense layers whose weights are run-time inputs (run_time_gemm.cc) against the
// reference kernels: the direct path (up to 4 rows) and the packed one (more),
// row and column tails, K not a multiple of 4 or of the K block, matmul and
// fully_connected with bias, relu and tanh, 1 and 2 threads, new weights on every
// run (the panels are packed again into the same buffers); NaN, infinity and
// overflow in the input, the weights or the bias give the reference's result;
// which kernel a layer with run-time weights gets.
#include <limits>
#include <string>
#include <vector>

#include "xnnpack/xnn_common.h"
#include "xnnpack/xnn_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;

ops::Attrs fc_attrs(int64_t act) {
  ops::Attrs a;
  a.values = {ops::AttrValue::Int(act)};
  return a;
}

bool have_ours() { return simd::best_isa() != simd::Isa::kBaseline; }

// One kernel prepared for [M?, K] @ [K, N] (M symbolic), run on three weight sets
// in turn and on M = `ms` rows, all against the reference.
void check_layer(int64_t k, int64_t n, const std::vector<int64_t>& ms, bool bias, int64_t act, int threads,
                 bool symbolic_bias = false) {
  ThreadPool pool(threads);
  HostTensor a0 = HostTensor::random(DType::kF32, {ms[0], k}, 1, -1, 1);
  HostTensor w0 = HostTensor::random(DType::kF32, {k, n}, 2, -1, 1);
  HostTensor b0 = HostTensor::random(DType::kF32, {n}, 3, -1, 1);
  std::vector<InputInfo> infos = {info_of(a0, false, true), info_of(w0, false)};
  infos[0].shape[1] = k;
  if (bias) infos.push_back(info_of(b0, false, symbolic_bias));
  const OpId op = bias ? OpId::FullyConnected : OpId::MatMul;
  const ops::Attrs attrs = bias ? fc_attrs(act) : ops::Attrs{};
  std::unique_ptr<PreparedKernel> kernel = xnnpack_prepare(op, attrs, infos);
  ASSERT_NE(kernel, nullptr);
  ASSERT_EQ(std::string(kernel->name()).rfind("sg:run_time_gemm_f32(", 0), 0u) << kernel->name();
  uint32_t seed = 10;
  for (int64_t m : ms)
    for (int set = 0; set < 3; ++set, ++seed) {
      std::vector<HostTensor> in = {HostTensor::random(DType::kF32, {m, k}, seed, -1, 1),
                                    HostTensor::random(DType::kF32, {k, n}, seed + 100, -2, 2)};
      if (bias) in.push_back(HostTensor::random(DType::kF32, {n}, seed + 200, -1, 1));
      compare_once(*kernel, op, attrs, in, pool.get(),
                   std::string(kernel->name()) + " " + std::to_string(m) + "x" + std::to_string(k) + "x" +
                       std::to_string(n) + " set " + std::to_string(set) + ", " + std::to_string(threads) +
                       " threads");
    }
}

TEST(RunTimeGemm, AwkwardShapesAndNewWeightsEveryRun) {
  ASSERT_TRUE(xnnpack_init().ok());
  if (!have_ours()) GTEST_SKIP() << "no AVX2 or AVX-512: run-time weights run the batch matmul";
  int variant = 0;
  for (int threads : {1, 2})
    for (int64_t k : {1, 3, 7, 17, 65, 784})
      for (int64_t n : {1, 7, 17, 33, 65}) {
        const int v = variant++ % 4;
        const int64_t act = v == 2 ? ops::attr::kActRelu : v == 3 ? ops::attr::kActTanh : ops::attr::kActNone;
        // Direct rows (1-4), then the packed path (5, 7, 17, 65), then direct again.
        check_layer(k, n, {1, 2, 3, 4, 5, 7, 17, 65, 1}, v != 0, act, threads);
      }
}

// The mlp's layers (784 -> 512 -> 512 -> 10) at batch 1 and 64, and layers large
// enough to split over two threads by panels, by rows (one panel), and by columns
// (direct rows).
TEST(RunTimeGemm, MlpLayersAndThreadSplits) {
  ASSERT_TRUE(xnnpack_init().ok());
  if (!have_ours()) GTEST_SKIP() << "no AVX2 or AVX-512";
  for (int threads : {1, 2}) {
    check_layer(784, 512, {1, 64}, true, ops::attr::kActRelu, threads);
    check_layer(512, 512, {64, 1}, true, ops::attr::kActRelu, threads);
    check_layer(512, 10, {64, 1, 3}, true, ops::attr::kActNone, threads, true);
    check_layer(1000, 7, {200, 4}, false, ops::attr::kActNone, threads);
    check_layer(300, 1000, {2, 33}, false, ops::attr::kActNone, threads);
  }
}

// A leading batch of the left operand becomes rows, as for constant weights.
TEST(RunTimeGemm, LeadingDimsBecomeRows) {
  ASSERT_TRUE(xnnpack_init().ok());
  if (!have_ours()) GTEST_SKIP() << "no AVX2 or AVX-512";
  HostTensor a = HostTensor::random(DType::kF32, {3, 5, 40}, 1, -1, 1);
  HostTensor w = HostTensor::random(DType::kF32, {40, 24}, 2, -1, 1);
  std::vector<InputInfo> infos = {info_of(a, false), info_of(w, false)};
  std::vector<std::vector<HostTensor>> cases = {{a, w}};
  compare_cases(OpId::MatMul, {}, infos, cases);
  HostTensor v = HostTensor::random(DType::kF32, {40}, 3, -1, 1);
  std::vector<std::vector<HostTensor>> vector_case = {{v, w}};
  compare_cases(OpId::MatMul, {}, std::vector<InputInfo>{info_of(v, false), info_of(w, false)}, vector_case);
}

// A batched matmul of run-time operands with the same batch dims: each matrix on
// our GEMM (direct and packed rows); broadcast batch dims (symbolic at prepare)
// run the batch matmul, with the same results as the reference.
TEST(RunTimeGemm, BatchedMatmulsOfRunTimeOperands) {
  ASSERT_TRUE(xnnpack_init().ok());
  if (!have_ours()) GTEST_SKIP() << "no AVX2 or AVX-512";
  for (int64_t m : {1, 4, 9}) {
    HostTensor a = HostTensor::random(DType::kF32, {2, 3, m, 40}, 1, -1, 1);
    HostTensor b = HostTensor::random(DType::kF32, {2, 3, 40, 21}, 2, -1, 1);
    HostTensor b2 = HostTensor::random(DType::kF32, {2, 3, 40, 21}, 3, -1, 1);
    InputInfo ai = info_of(a, false, true);
    ai.shape[3] = 40;
    std::vector<InputInfo> infos = {ai, info_of(b, false)};
    auto kernel = xnnpack_prepare(OpId::MatMul, {}, infos);
    ASSERT_NE(kernel, nullptr);
    EXPECT_EQ(std::string(kernel->name()).rfind("sg:run_time_batch_gemm_f32(", 0), 0u) << kernel->name();
    HostTensor a1 = HostTensor::random(DType::kF32, {1, 3, m, 40}, 4, -1, 1);  // broadcast over dim 0
    std::vector<std::vector<HostTensor>> cases = {{a, b}, {a, b2}, {a1, b}};
    compare_cases(OpId::MatMul, {}, infos, cases);
  }
}

// Non-finite values and overflow anywhere give exactly the reference's result, on
// both paths (1 row direct, 6 rows packed), and the next run is fast again.
TEST(RunTimeGemm, NonFiniteAndOverflowGiveTheReferenceResult) {
  ASSERT_TRUE(xnnpack_init().ok());
  if (!have_ours()) GTEST_SKIP() << "no AVX2 or AVX-512";
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (int64_t m : {1, 6}) {
    HostTensor x = HostTensor::random(DType::kF32, {m, 12}, 1, -1, 1);
    HostTensor w = HostTensor::random(DType::kF32, {12, 40}, 2, -1, 1);
    HostTensor b = HostTensor::random(DType::kF32, {40}, 3, -1, 1);
    const ops::Attrs relu = fc_attrs(ops::attr::kActRelu);
    auto kernel = xnnpack_prepare(OpId::FullyConnected, relu,
                                  std::vector<InputInfo>{info_of(x, false), info_of(w, false), info_of(b, false)});
    ASSERT_NE(kernel, nullptr);
    auto run = [&](HostTensor xx, HostTensor ww, HostTensor bb, const std::string& what) {
      std::vector<HostTensor> in = {xx, ww, bb};
      compare_once(*kernel, OpId::FullyConnected, relu, in, nullptr, what + ", " + std::to_string(m) + " rows");
    };
    HostTensor xn = x, wn = w, wi = w, wo = w, bn = b;
    xn.set(3, nan);
    wn.set(41, nan);      // row 1, column 1
    wi.set(12 * 40 - 1, -inf);  // the last column of the last panel
    for (int64_t i = 0; i < 40; ++i) wo.set(i, 3e38);  // x * w overflows in row 0
    bn.set(39, inf);
    run(xn, w, b, "NaN in x");
    run(x, wn, b, "NaN in w");
    run(x, wi, b, "-inf in w");
    run(x, wo, b, "overflow");
    run(x, w, bn, "inf in the bias");
    run(x, w, b, "finite again");
  }
}

// Which kernel a layer with run-time weights gets; a rank-3 right operand keeps
// the batch matmul.
TEST(RunTimeGemm, LayersChooseTheirKernel) {
  ASSERT_TRUE(xnnpack_init().ok());
  HostTensor x = HostTensor::random(DType::kF32, {64, 784}, 1, -1, 1);
  HostTensor w = HostTensor::random(DType::kF32, {784, 512}, 2, -1, 1);
  HostTensor b = HostTensor::random(DType::kF32, {512}, 3, -1, 1);
  auto fc = xnnpack_prepare(OpId::FullyConnected, fc_attrs(ops::attr::kActRelu),
                            std::vector<InputInfo>{info_of(x, false, true), info_of(w, false), info_of(b, true)});
  auto mm = xnnpack_prepare(OpId::MatMul, {}, std::vector<InputInfo>{info_of(x, false, true), info_of(w, false)});
  ASSERT_NE(fc, nullptr);
  ASSERT_NE(mm, nullptr);
  switch (simd::best_isa()) {
    case simd::Isa::kAvx512:
      EXPECT_STREQ(fc->name(), "sg:run_time_gemm_f32(avx512)+bias+relu");
      EXPECT_STREQ(mm->name(), "sg:run_time_gemm_f32(avx512)");
      break;
    case simd::Isa::kAvx2:
      EXPECT_STREQ(fc->name(), "sg:run_time_gemm_f32(avx2)+bias+relu");
      EXPECT_STREQ(mm->name(), "sg:run_time_gemm_f32(avx2)");
      break;
    default: EXPECT_STREQ(mm->name(), "sg:batch_matmul_f32");
  }
  // Symbolic weights: no panels to allocate at prepare time.
  auto symbolic = xnnpack_prepare(OpId::MatMul, {}, std::vector<InputInfo>{info_of(x, false), info_of(w, false, true)});
  ASSERT_NE(symbolic, nullptr);
  EXPECT_STREQ(symbolic->name(), "sg:batch_matmul_f32");
}

// Wrong weights at run time (a shape other than the prepared one) are an error
// naming the operand, not a read past the buffer.
// A weight gradient, x^T @ g: [784, N] @ [N, 512] with N (K of the product) symbolic.
// The kernel sizes its panels at the first run and again whenever K changes, and an
// empty K gives the reference's zeros.
TEST(RunTimeGemm, SymbolicKSizesThePanelsAtTheRun) {
  ASSERT_TRUE(xnnpack_init().ok());
  if (!have_ours()) GTEST_SKIP() << "no AVX2 or AVX-512";
  HostTensor a = HostTensor::random(DType::kF32, {33, 64}, 1, -1, 1);
  HostTensor w = HostTensor::random(DType::kF32, {64, 40}, 2, -1, 1);
  std::vector<InputInfo> infos = {info_of(a, false, true), info_of(w, false, true)};
  infos[1].shape[1] = 40;
  infos[0].shape[0] = 33;
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    std::unique_ptr<PreparedKernel> kernel = xnnpack_prepare(OpId::MatMul, {}, infos);
    ASSERT_NE(kernel, nullptr);
    EXPECT_EQ(std::string(kernel->name()).rfind("sg:run_time_gemm_f32(", 0), 0u) << kernel->name();
    uint32_t seed = 20;
    for (int64_t k : {64, 64, 7, 300, 1, 0, 64}) {
      std::vector<HostTensor> in = {HostTensor::random(DType::kF32, {33, k}, seed, -1, 1),
                                    HostTensor::random(DType::kF32, {k, 40}, seed + 1, -1, 1)};
      seed += 2;
      compare_once(*kernel, OpId::MatMul, {}, in, pool.get(),
                   "K = " + std::to_string(k) + ", " + std::to_string(threads) + " threads");
    }
  }
}

TEST(RunTimeGemm, WeightsOfAnotherShapeAreAnError) {
  ASSERT_TRUE(xnnpack_init().ok());
  if (!have_ours()) GTEST_SKIP() << "no AVX2 or AVX-512";
  HostTensor x = HostTensor::random(DType::kF32, {2, 8}, 1, -1, 1);
  HostTensor w = HostTensor::random(DType::kF32, {8, 16}, 2, -1, 1);
  HostTensor wrong = HostTensor::random(DType::kF32, {8, 8}, 3, -1, 1);
  auto kernel = xnnpack_prepare(OpId::MatMul, {}, std::vector<InputInfo>{info_of(x, false), info_of(w, false)});
  ASSERT_NE(kernel, nullptr);
  HostTensor out(DType::kF32, {2, 16});
  std::vector<TensorRef> in = {x.ref(), wrong.ref()};
  TensorRef o = out.ref();
  KernelContext ctx;
  const Status s = kernel->run(ctx, in, std::span<TensorRef>(&o, 1));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("weights f32[8, 8]"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace sg::kernels::testing
