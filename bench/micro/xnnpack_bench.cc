// Micro-benchmarks of the XNNPACK backend's dense kernels, with GFLOP/s counters:
//   - fully connected 64x1024->1024 and 64x4096->4096, weights split into
//     128-channel operators vs one operator (the L2 pitfall of DEPENDENCIES.md);
//   - conv2d 3x3 SAME 1x56x56x64 -> 64;
//   - the mlp and cnn benchmark models' layers as fused nodes (bias and relu
//     inside the XNNPACK operator);
//   - dense layers on XNNPACK vs our packed-weight GEMM (AVX-512 and AVX2);
//   - matmul 64x784 @ 784x512: the reference kernel, XNNPACK fully connected
//     (constant weights) and our own GEMM (both operands non-constant);
//   - one core streaming a buffer it reads again and again (BM_StreamRead/KiB),
//     the floor of matrix-vector loops whose weights stay in cache;
//   - max pooling and elementwise maximum on our own vector kernels.
// The argument is the thread count (1 or 2).
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <vector>

#include "interface/kernel.h"
#include "xnnpack/xnn_common.h"
#include "xnnpack/xnnpack_backend.h"

namespace sg::kernels {
namespace {

// A dense f32 tensor with XNNPACK's 16 readable bytes past the end.
struct Buffer {
  std::vector<int64_t> shape;
  std::vector<float> data;

  explicit Buffer(std::vector<int64_t> s, uint32_t seed = 0) : shape(std::move(s)) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    data.assign(size_t(n) + 16, 0.0f);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1, 1);
    for (int64_t i = 0; i < n; ++i) data[size_t(i)] = dist(rng);
  }
  TensorRef ref() {
    TensorRef r;
    r.rank = int(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) r.shape[d] = shape[d];
    r.data = data.data();
    return r;
  }
  InputInfo info(bool constant) const {
    InputInfo i;
    i.rank = int(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) i.shape[d] = shape[d];
    i.constant = constant ? data.data() : nullptr;
    return i;
  }
};

// Owns a thread pool for one benchmark run.
struct Pool {
  void* pool;
  explicit Pool(int threads) : pool(xnnpack_create_threadpool(threads)) {}
  ~Pool() { xnnpack_destroy_threadpool(pool); }
};

void set_flops(benchmark::State& state, double flops, const char* kernel_name) {
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(kernel_name);
}

void run_prepared(benchmark::State& state, PreparedKernel& kernel, std::vector<TensorRef> in, TensorRef out,
                  double flops) {
  Pool pool(int(state.range(0)));
  KernelContext ctx;
  ctx.threadpool = pool.pool;
  for (auto _ : state) {
    const Status s = kernel.run(ctx, in, std::span<TensorRef>(&out, 1));
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      break;
    }
    benchmark::ClobberMemory();
  }
  set_flops(state, flops, kernel.name());
}

void fully_connected(benchmark::State& state, int64_t m, int64_t k, int64_t n, xnn::FcSplit split) {
  if (!xnnpack_init().ok()) return state.SkipWithError("XNNPACK unsupported on this CPU");
  Buffer a({m, k}, 1), b({k, n}, 2), c({m, n});
  const InputInfo infos[2] = {a.info(false), b.info(true)};
  auto kernel = xnn::make_fully_connected(infos, ops::attr::kActNone, split);
  if (!kernel) return state.SkipWithError("fully connected not prepared");
  run_prepared(state, *kernel, {a.ref(), b.ref()}, c.ref(), 2.0 * double(m * k * n));
}

void BM_FullyConnected_64x1024x1024_Split(benchmark::State& s) { fully_connected(s, 64, 1024, 1024, xnn::FcSplit::kAlways); }
void BM_FullyConnected_64x1024x1024_Unsplit(benchmark::State& s) { fully_connected(s, 64, 1024, 1024, xnn::FcSplit::kNever); }
void BM_FullyConnected_64x4096x4096_Split(benchmark::State& s) { fully_connected(s, 64, 4096, 4096, xnn::FcSplit::kAlways); }
void BM_FullyConnected_64x4096x4096_Unsplit(benchmark::State& s) { fully_connected(s, 64, 4096, 4096, xnn::FcSplit::kNever); }

// The mlp benchmark's first layer (784 -> 512, relu) at batch 64 and 1, as one
// fused fully_connected node, with the weights split or not.
void mlp_layer(benchmark::State& state, int64_t m, xnn::FcSplit split) {
  if (!xnnpack_init().ok()) return state.SkipWithError("XNNPACK unsupported on this CPU");
  Buffer a({m, 784}, 1), w({784, 512}, 2), b({512}, 3), c({m, 512});
  const InputInfo infos[3] = {a.info(false), w.info(true), b.info(true)};
  auto kernel = xnn::make_fully_connected(infos, ops::attr::kActRelu, split);
  if (!kernel) return state.SkipWithError("fully_connected not prepared");
  run_prepared(state, *kernel, {a.ref(), w.ref(), b.ref()}, c.ref(), 2.0 * double(m * 784 * 512));
}

void BM_MlpLayer_64x784x512_Split(benchmark::State& s) { mlp_layer(s, 64, xnn::FcSplit::kAlways); }
void BM_MlpLayer_64x784x512_Unsplit(benchmark::State& s) { mlp_layer(s, 64, xnn::FcSplit::kNever); }
void BM_MlpLayer_1x784x512_Split(benchmark::State& s) { mlp_layer(s, 1, xnn::FcSplit::kAlways); }
void BM_MlpLayer_1x784x512_Unsplit(benchmark::State& s) { mlp_layer(s, 1, xnn::FcSplit::kNever); }

// The cnn benchmark's convolutions: 3x3 SAME + bias + relu as one conv2d_bias node.
void cnn_conv(benchmark::State& state, int64_t hw, int64_t cin, int64_t cout) {
  if (!xnnpack_init().ok()) return state.SkipWithError("XNNPACK unsupported on this CPU");
  Buffer x({1, hw, hw, cin}, 1), w({3, 3, cin, cout}, 2), b({cout}, 3), y({1, hw, hw, cout});
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints({1, 1}), ops::AttrValue::Ints({1, 1}), ops::AttrValue::String("SAME"),
                  ops::AttrValue::Int(1), ops::AttrValue::Int(ops::attr::kActRelu)};
  const InputInfo infos[3] = {x.info(false), w.info(true), b.info(true)};
  auto kernel = xnnpack_prepare(ops::OpId::Conv2DBias, attrs, infos);
  if (!kernel) return state.SkipWithError("conv2d_bias not prepared");
  run_prepared(state, *kernel, {x.ref(), w.ref(), b.ref()}, y.ref(), 2.0 * double(hw * hw * cout * 9 * cin));
}

void BM_CnnConv_32x32x3x16(benchmark::State& s) { cnn_conv(s, 32, 3, 16); }
void BM_CnnConv_16x16x16x32(benchmark::State& s) { cnn_conv(s, 16, 16, 32); }
void BM_CnnConv_8x8x32x64(benchmark::State& s) { cnn_conv(s, 8, 32, 64); }

// Kernels of our own whose vectors are 16 lanes on AVX-512, where GCC may fall
// back to one lane at a time (max_pool.cc, binary.cc): the cnn benchmark's first
// 2x2 max pooling and an elementwise maximum of 1M floats, in GB/s of input read.
void run_streaming(benchmark::State& state, PreparedKernel& kernel, std::vector<TensorRef> in, TensorRef out,
                   double bytes) {
  KernelContext ctx;
  for (auto _ : state) {
    const Status st = kernel.run(ctx, in, std::span<TensorRef>(&out, 1));
    if (!st.ok()) return state.SkipWithError(st.message().c_str());
    benchmark::ClobberMemory();
  }
  state.counters["GB/s"] = benchmark::Counter(bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(kernel.name());
}

void BM_MaxPool2x2_32x32x16(benchmark::State& state) {
  if (!xnnpack_init().ok()) return state.SkipWithError("XNNPACK unsupported on this CPU");
  Buffer x({1, 32, 32, 16}, 1), y({1, 16, 16, 16});
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints({2, 2}), ops::AttrValue::Ints({2, 2}), ops::AttrValue::String("VALID")};
  const InputInfo infos[1] = {x.info(false)};
  auto kernel = xnnpack_prepare(ops::OpId::MaxPool2D, attrs, infos);
  if (!kernel) return state.SkipWithError("max_pool2d not prepared");
  run_streaming(state, *kernel, {x.ref()}, y.ref(), 32.0 * 32 * 16 * 4);
}

void BM_Maximum_1M(benchmark::State& state) {
  if (!xnnpack_init().ok()) return state.SkipWithError("XNNPACK unsupported on this CPU");
  Buffer a({1 << 20}, 1), b({1 << 20}, 2), o({1 << 20});
  const InputInfo infos[2] = {a.info(false), b.info(false)};
  auto kernel = xnnpack_prepare(ops::OpId::Maximum, {}, infos);
  if (!kernel) return state.SkipWithError("maximum not prepared");
  run_streaming(state, *kernel, {a.ref(), b.ref()}, o.ref(), 2.0 * (1 << 20) * 4);
}

// A binary op with a scalar operand (x * 0.5): the row splats it once.
void BM_MulScalar_1M(benchmark::State& state) {
  if (!xnnpack_init().ok()) return state.SkipWithError("XNNPACK unsupported on this CPU");
  Buffer a({1 << 20}, 1), s({}, 2), o({1 << 20});
  const InputInfo infos[2] = {a.info(false), s.info(false)};
  auto kernel = xnnpack_prepare(ops::OpId::Mul, {}, infos);
  if (!kernel) return state.SkipWithError("mul not prepared");
  run_streaming(state, *kernel, {a.ref(), s.ref()}, o.ref(), 2.0 * (1 << 20) * 4);
}

// gelu written out, 0.5 * x * (1 + tanh(0.79788456 * (x + 0.044715 * x * x * x))),
// over 1M floats: the nine nodes one at a time (arg 0) or as one elementwise_chain
// (arg 1, what -O2 makes of them). Bytes counted: x read and the result written.
void BM_GeluByHand_1M(benchmark::State& state) {
  if (!xnnpack_init().ok()) return state.SkipWithError("XNNPACK unsupported on this CPU");
  using ops::OpId;
  const int64_t n = 1 << 20;
  Buffer x({n}, 1), c1({}, 2), c2({}, 3), one({}, 4), half({}, 5);
  c1.data[0] = 0.044715f;
  c2.data[0] = 0.79788456f;
  one.data[0] = 1.0f;
  half.data[0] = 0.5f;
  // Inputs 0..4, then the steps' results from 5.
  const std::vector<std::array<int64_t, 3>> steps = {
      {int64_t(OpId::Mul), 0, 0}, {int64_t(OpId::Mul), 5, 0}, {int64_t(OpId::Mul), 1, 6},  {int64_t(OpId::Add), 0, 7},
      {int64_t(OpId::Mul), 2, 8}, {int64_t(OpId::Tanh), 9, -1}, {int64_t(OpId::Add), 3, 10}, {int64_t(OpId::Mul), 4, 0},
      {int64_t(OpId::Mul), 12, 11}};
  std::vector<Buffer*> values = {&x, &c1, &c2, &one, &half};
  std::vector<std::unique_ptr<Buffer>> temps;
  for (size_t j = 0; j < steps.size(); ++j) values.push_back(temps.emplace_back(new Buffer({n})).get());
  const auto info = [&](int64_t v) { return values[size_t(v)]->info(false); };
  if (state.range(0) == 1) {
    std::vector<int64_t> flat;
    for (const auto& st : steps) flat.insert(flat.end(), st.begin(), st.end());
    ops::Attrs attrs;
    attrs.values = {ops::AttrValue::Ints(flat)};
    const InputInfo infos[5] = {info(0), info(1), info(2), info(3), info(4)};
    auto kernel = xnnpack_prepare(OpId::ElementwiseChain, attrs, infos);
    if (!kernel) return state.SkipWithError("elementwise_chain not prepared");
    run_streaming(state, *kernel, {x.ref(), c1.ref(), c2.ref(), one.ref(), half.ref()}, values.back()->ref(),
                  2.0 * double(n) * 4);
    return;
  }
  std::vector<std::unique_ptr<PreparedKernel>> kernels;
  for (const auto& st : steps) {
    std::vector<InputInfo> infos = {info(st[1])};
    if (st[2] >= 0) infos.push_back(info(st[2]));
    kernels.push_back(xnnpack_prepare(OpId(st[0]), {}, infos));
    if (!kernels.back()) return state.SkipWithError("a step was not prepared");
  }
  KernelContext ctx;
  for (auto _ : state) {
    for (size_t j = 0; j < steps.size(); ++j) {
      std::vector<TensorRef> in = {values[size_t(steps[j][1])]->ref()};
      if (steps[j][2] >= 0) in.push_back(values[size_t(steps[j][2])]->ref());
      TensorRef out = values[5 + j]->ref();
      if (!kernels[j]->run(ctx, in, std::span(&out, 1)).ok()) return state.SkipWithError("a step failed");
    }
  }
  state.counters["GB/s"] = benchmark::Counter(2.0 * double(n) * 4 * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel("nine nodes");
}

void BM_Conv3x3_56x56x64(benchmark::State& state) {
  if (!xnnpack_init().ok()) return state.SkipWithError("XNNPACK unsupported on this CPU");
  Buffer x({1, 56, 56, 64}, 1), w({3, 3, 64, 64}, 2), y({1, 56, 56, 64});
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints({1, 1}), ops::AttrValue::Ints({1, 1}), ops::AttrValue::String("SAME"),
                  ops::AttrValue::Int(1)};
  const InputInfo infos[2] = {x.info(false), w.info(true)};
  auto kernel = xnnpack_prepare(ops::OpId::Conv2D, attrs, infos);
  if (!kernel) return state.SkipWithError("conv2d not prepared");
  run_prepared(state, *kernel, {x.ref(), w.ref()}, y.ref(), 2.0 * 56 * 56 * 64 * 64 * 9);
}

// Dense layers (fully_connected with constant weights and bias) on XNNPACK's
// operator (split into 128-channel operators where it chooses to) against our
// packed-weight GEMM for each instruction set: the mlp's layers at batch 64 and 1,
// and a large 4096 x 4096 layer.
enum class DenseImpl { kXnnpack, kOursAvx512, kOursAvx2 };

void dense(benchmark::State& state, int64_t m, int64_t k, int64_t n, bool relu, DenseImpl impl) {
  if (!xnnpack_init().ok()) return state.SkipWithError("XNNPACK unsupported on this CPU");
  Buffer a({m, k}, 1), w({k, n}, 2), b({n}, 3), c({m, n});
  const InputInfo infos[3] = {a.info(false), w.info(true), b.info(true)};
  const int64_t act = relu ? ops::attr::kActRelu : ops::attr::kActNone;
  std::unique_ptr<PreparedKernel> kernel;
  switch (impl) {
    case DenseImpl::kXnnpack: kernel = xnn::make_fully_connected(infos, act, xnn::FcSplit::kXnnpack); break;
    case DenseImpl::kOursAvx512: kernel = xnn::make_packed_gemm(infos, act, simd::Isa::kAvx512); break;
    case DenseImpl::kOursAvx2: kernel = xnn::make_packed_gemm(infos, act, simd::Isa::kAvx2); break;
  }
  if (!kernel) return state.SkipWithError("not prepared (instruction set missing?)");
  run_prepared(state, *kernel, {a.ref(), w.ref(), b.ref()}, c.ref(), 2.0 * double(m * k * n));
}

#define SG_DENSE(NAME, M, K, N, RELU)                                                                          \
  void BM_Dense_##NAME##_Xnnpack(benchmark::State& s) { dense(s, M, K, N, RELU, DenseImpl::kXnnpack); }       \
  void BM_Dense_##NAME##_OursAvx512(benchmark::State& s) { dense(s, M, K, N, RELU, DenseImpl::kOursAvx512); } \
  void BM_Dense_##NAME##_OursAvx2(benchmark::State& s) { dense(s, M, K, N, RELU, DenseImpl::kOursAvx2); }
SG_DENSE(64x784x512, 64, 784, 512, true)
SG_DENSE(64x512x512, 64, 512, 512, true)
SG_DENSE(64x512x10, 64, 512, 10, false)
SG_DENSE(64x512x48, 64, 512, 48, false)
SG_DENSE(64x512x100, 64, 512, 100, false)
SG_DENSE(1x784x512, 1, 784, 512, true)
SG_DENSE(1x512x512, 1, 512, 512, true)
SG_DENSE(1x512x10, 1, 512, 10, false)
SG_DENSE(8x784x512, 8, 784, 512, true)
SG_DENSE(64x4096x4096, 64, 4096, 4096, false)
// The rnn benchmark's input projection, hoisted out of its loop: xs [100, 64] @ w [64, 256].
SG_DENSE(100x64x256, 100, 64, 256, false)
// The rnn and beam loops' matrix-vector products: h [256] @ u [256, 256], h [128] @ v [128, 1000].
SG_DENSE(1x256x256, 1, 256, 256, false)
SG_DENSE(1x128x1000, 1, 128, 1000, false)
#undef SG_DENSE

constexpr int64_t kM = 64, kK = 784, kN = 512;

void BM_MatMul_64x784x512_Reference(benchmark::State& state) {
  Buffer a({kM, kK}, 1), b({kK, kN}, 2), c({kM, kN});
  const TensorRef in[2] = {a.ref(), b.ref()};
  TensorRef out = c.ref();
  const KernelFn fn = reference_kernel(ops::OpId::MatMul);
  KernelContext ctx;
  for (auto _ : state) {
    const Status s = fn(ctx, {}, std::span<const TensorRef>(in, 2), std::span<TensorRef>(&out, 1));
    if (!s.ok()) {
      state.SkipWithError(s.message().c_str());
      break;
    }
    benchmark::ClobberMemory();
  }
  set_flops(state, 2.0 * kM * kK * kN, "reference:matmul");
}

void matmul_prepared(benchmark::State& state, bool constant_b) {
  if (!xnnpack_init().ok()) return state.SkipWithError("XNNPACK unsupported on this CPU");
  Buffer a({kM, kK}, 1), b({kK, kN}, 2), c({kM, kN});
  const InputInfo infos[2] = {a.info(false), b.info(constant_b)};
  auto kernel = xnnpack_prepare(ops::OpId::MatMul, {}, infos);
  if (!kernel) return state.SkipWithError("matmul not prepared");
  run_prepared(state, *kernel, {a.ref(), b.ref()}, c.ref(), 2.0 * kM * kK * kN);
}

void BM_MatMul_64x784x512_XnnpackConstantB(benchmark::State& s) { matmul_prepared(s, true); }
void BM_MatMul_64x784x512_OwnGemm(benchmark::State& s) { matmul_prepared(s, false); }

// The rate one core reads f32 weights that a loop reads again every step: the
// floor of the rnn and beam loops (U, 256 KiB; V, U and W, 596 KiB), which no f32
// matrix-vector product goes under. A sum of range(0) KiB into four vector
// accumulators (no other work per load), again and again; bench/compare reads its
// GB/s counter.
template <class V>
SG_SIMD_INLINE float stream_sum(const float* p, size_t n) {
  constexpr size_t L = size_t(simd::kLanes<V>);
  V a0{}, a1{}, a2{}, a3{};
  for (size_t i = 0; i + 4 * L <= n; i += 4 * L) {
    a0 += simd::load<V>(p + i);
    a1 += simd::load<V>(p + i + L);
    a2 += simd::load<V>(p + i + 2 * L);
    a3 += simd::load<V>(p + i + 3 * L);
  }
  const V a = (a0 + a1) + (a2 + a3);
  float s = 0;
  for (size_t l = 0; l < L; ++l) s += a[l];
  return s;
}
#ifdef SG_SIMD_X86
SG_TARGET_AVX512 float stream_avx512(const float* p, size_t n) { return stream_sum<simd::V16>(p, n); }
SG_TARGET_AVX2 float stream_avx2(const float* p, size_t n) { return stream_sum<simd::V8>(p, n); }
#endif
float stream(simd::Isa isa, const float* p, size_t n) {
  switch (isa) {
#ifdef SG_SIMD_X86
    case simd::Isa::kAvx512: return stream_avx512(p, n);
    case simd::Isa::kAvx2: return stream_avx2(p, n);
#endif
    default: return stream_sum<simd::V4>(p, n);
  }
}

void BM_StreamRead(benchmark::State& s) {
  const size_t n = size_t(s.range(0)) * 1024 / sizeof(float);
  std::vector<float> weights(n, 0.5f);
  const simd::Isa isa = simd::best_isa();
  for (auto _ : s) benchmark::DoNotOptimize(stream(isa, weights.data(), n));
  s.counters["GB/s"] = benchmark::Counter(double(n * sizeof(float)) * double(s.iterations()) / 1e9,
                                          benchmark::Counter::kIsRate);
}

// Real time: with two threads the caller's CPU time undercounts the work.
#define SG_BENCH(fn) BENCHMARK(fn)->Arg(1)->Arg(2)->UseRealTime()->MinTime(0.5)
SG_BENCH(BM_FullyConnected_64x1024x1024_Split);
SG_BENCH(BM_FullyConnected_64x1024x1024_Unsplit);
SG_BENCH(BM_FullyConnected_64x4096x4096_Split);
SG_BENCH(BM_FullyConnected_64x4096x4096_Unsplit);
SG_BENCH(BM_Conv3x3_56x56x64);
SG_BENCH(BM_MlpLayer_64x784x512_Split);
SG_BENCH(BM_MlpLayer_64x784x512_Unsplit);
SG_BENCH(BM_MlpLayer_1x784x512_Split);
SG_BENCH(BM_MlpLayer_1x784x512_Unsplit);
BENCHMARK(BM_CnnConv_32x32x3x16)->Arg(1)->UseRealTime()->MinTime(0.5);
BENCHMARK(BM_CnnConv_16x16x16x32)->Arg(1)->UseRealTime()->MinTime(0.5);
BENCHMARK(BM_CnnConv_8x8x32x64)->Arg(1)->UseRealTime()->MinTime(0.5);
BENCHMARK(BM_MatMul_64x784x512_Reference)->Arg(1)->UseRealTime()->MinTime(0.5);
SG_BENCH(BM_MatMul_64x784x512_XnnpackConstantB);
SG_BENCH(BM_MatMul_64x784x512_OwnGemm);
#define SG_DENSE_BENCH(NAME)               \
  SG_BENCH(BM_Dense_##NAME##_Xnnpack);     \
  SG_BENCH(BM_Dense_##NAME##_OursAvx512);  \
  SG_BENCH(BM_Dense_##NAME##_OursAvx2)
SG_DENSE_BENCH(64x784x512);
SG_DENSE_BENCH(64x512x512);
SG_DENSE_BENCH(64x512x10);
SG_DENSE_BENCH(64x512x48);
SG_DENSE_BENCH(64x512x100);
SG_DENSE_BENCH(1x784x512);
SG_DENSE_BENCH(1x512x512);
SG_DENSE_BENCH(1x512x10);
SG_DENSE_BENCH(8x784x512);
SG_DENSE_BENCH(64x4096x4096);
SG_DENSE_BENCH(100x64x256);
SG_DENSE_BENCH(1x256x256);
SG_DENSE_BENCH(1x128x1000);
BENCHMARK(BM_StreamRead)->Arg(256)->Arg(596)->UseRealTime()->MinTime(0.5);
BENCHMARK(BM_MaxPool2x2_32x32x16)->MinTime(0.5);
BENCHMARK(BM_Maximum_1M)->MinTime(0.5);
BENCHMARK(BM_MulScalar_1M)->MinTime(0.5);
BENCHMARK(BM_GeluByHand_1M)->Arg(0)->Arg(1)->MinTime(0.5);

}  // namespace
}  // namespace sg::kernels

BENCHMARK_MAIN();
