// The CUDA backend against the reference kernels. Device-independent parts
// (which nodes the GPU covers, errors without a device) run everywhere; each op
// is run on the GPU only where one is visible, else the test says it skipped.
// f32 results must be within 1e-5 of the output's largest magnitude (matmuls and
// convolutions, which sum in another order: 1e-5 of the sum of |terms|, bounded
// here by 1e-4 of the output's magnitude for the sizes used).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cuda/cuda_backend.h"
#include "ops/infer.h"
#include "interface/kernel.h"

namespace sg::kernels::cuda {
namespace {

using ops::AttrValue;
using ops::OpId;

struct Host {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  TensorRef ref() {
    TensorRef r;
    r.dtype = dtype;
    r.rank = int(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) r.shape[d] = shape[d];
    r.data = bytes.data();
    return r;
  }
};

Host make(DType dtype, std::vector<int64_t> shape, uint32_t seed, double lo = -2, double hi = 2) {
  Host h{dtype, std::move(shape), {}};
  h.bytes.resize(size_t(h.numel()) * dtype_size(dtype) + 64);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  for (int64_t i = 0; i < h.numel(); ++i) {
    const double v = u(rng);
    switch (dtype) {
      case DType::kF32: reinterpret_cast<float*>(h.bytes.data())[i] = float(v); break;
      case DType::kI32: reinterpret_cast<int32_t*>(h.bytes.data())[i] = int32_t(std::floor(v)); break;
      case DType::kI64: reinterpret_cast<int64_t*>(h.bytes.data())[i] = int64_t(std::floor(v)); break;
      case DType::kBool: h.bytes[size_t(i)] = v > 0; break;
      case DType::kF16: reinterpret_cast<uint16_t*>(h.bytes.data())[i] = float_to_half(float(v)); break;
    }
  }
  return h;
}

std::vector<ops::TensorType<int64_t>> infer(OpId op, const ops::Attrs& attrs, const std::vector<Host>& in) {
  std::vector<ops::TensorType<int64_t>> types, out;
  for (const Host& h : in) types.push_back({h.dtype, h.shape});
  std::vector<std::optional<int64_t>> scalars(in.size());
  ops::ConcreteInferContext ctx;
  const Status s = ops::infer<int64_t>(op, attrs, types, scalars, out, ctx);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

std::vector<InputInfo> infos(const std::vector<Host>& in) {
  std::vector<InputInfo> v;
  for (const Host& h : in) {
    InputInfo i;
    i.dtype = h.dtype;
    i.rank = int(h.shape.size());
    for (size_t d = 0; d < h.shape.size(); ++d) i.shape[d] = h.shape[d];
    v.push_back(i);
  }
  return v;
}

ops::Attrs attrs_of(std::vector<AttrValue> v) {
  ops::Attrs a;
  a.values = std::move(v);
  return a;
}

class CudaOps : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_count() == 0) GTEST_SKIP() << "no CUDA device visible: the GPU tests ran nothing here";
    auto ctx = Context::create({});
    ASSERT_TRUE(ctx.ok()) << ctx.status().message();
    ctx_ = std::move(*ctx);
  }

  // Runs `op` on the reference kernel and on the GPU and compares the results.
  void check(OpId op, const ops::Attrs& attrs, std::vector<Host> in, double rel = 1e-5) {
    const std::string what = ops::op_def(op).name;
    SCOPED_TRACE(what);
    auto kernel = prepare(op, attrs, infos(in));
    ASSERT_NE(kernel, nullptr) << what << " is not covered on the GPU";
    const auto types = infer(op, attrs, in);
    ASSERT_FALSE(types.empty());
    Host want{types[0].dtype, types[0].shape, {}};
    want.bytes.assign(size_t(want.numel()) * dtype_size(want.dtype) + 64, 0);
    std::vector<TensorRef> refs;
    for (Host& h : in) refs.push_back(h.ref());
    TensorRef w = want.ref();
    ASSERT_TRUE(reference_kernel(op)(KernelContext{}, attrs, refs, std::span<TensorRef>(&w, 1)).ok());

    std::vector<void*> dev;
    std::vector<TensorRef> drefs;
    for (Host& h : in) {
      auto p = ctx_->allocate(h.bytes.size());
      ASSERT_TRUE(p.ok()) << p.status().message();
      ASSERT_TRUE(ctx_->upload(*p, h.bytes.data(), h.bytes.size()).ok());
      dev.push_back(*p);
      TensorRef r = h.ref();
      r.data = *p;
      drefs.push_back(r);
    }
    auto po = ctx_->allocate(want.bytes.size());
    ASSERT_TRUE(po.ok());
    TensorRef o = want.ref();
    o.data = *po;
    const Status s = kernel->run(*ctx_, drefs, std::span<TensorRef>(&o, 1));
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_TRUE(ctx_->synchronize().ok());
    Host got = want;
    ASSERT_TRUE(ctx_->download(got.bytes.data(), *po, size_t(want.numel()) * dtype_size(want.dtype)).ok());
    ASSERT_TRUE(ctx_->synchronize().ok());
    for (void* p : dev) ctx_->release(p);
    ctx_->release(*po);

    if (want.dtype != DType::kF32) {
      EXPECT_EQ(std::memcmp(got.bytes.data(), want.bytes.data(), size_t(want.numel()) * dtype_size(want.dtype)), 0);
      return;
    }
    const float* g = reinterpret_cast<const float*>(got.bytes.data());
    const float* e = reinterpret_cast<const float*>(want.bytes.data());
    double mag = 0;
    for (int64_t i = 0; i < want.numel(); ++i) mag = std::max(mag, double(std::fabs(e[i])));
    const double tol = mag > 0 ? rel * mag : 1e-6;
    int64_t bad = 0;
    for (int64_t i = 0; i < want.numel(); ++i) {
      const bool both_nan = std::isnan(g[i]) && std::isnan(e[i]);
      if (!both_nan && !(std::fabs(double(g[i]) - double(e[i])) <= tol)) {
        if (bad++ < 5) ADD_FAILURE() << what << "[" << i << "]: " << g[i] << " vs reference " << e[i];
      }
    }
    EXPECT_EQ(bad, 0);
  }

  std::unique_ptr<Context> ctx_;
};

TEST(CudaBackend, WithoutADeviceContextCreationIsAnError) {
  if (device_count() > 0) GTEST_SKIP() << "a CUDA device is visible";
  auto ctx = Context::create({});
  ASSERT_FALSE(ctx.ok());
  EXPECT_EQ(ctx.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(ctx.status().message().find("cuda:0"), std::string::npos) << ctx.status().message();
}

TEST(CudaBackend, CoversTheDenseOpsAndLeavesTheRestToTheCpu) {
  const auto f32 = [](std::vector<int64_t> s) {
    InputInfo i;
    i.rank = int(s.size());
    for (size_t d = 0; d < s.size(); ++d) i.shape[d] = s[d];
    return i;
  };
  const ops::Attrs none;
  std::vector<InputInfo> two = {f32({4, 8}), f32({8, 3})};
  auto mm = prepare(OpId::MatMul, none, two);
  ASSERT_NE(mm, nullptr);
  EXPECT_STREQ(mm->name(), "cublaslt:matmul");
  EXPECT_NE(prepare(OpId::Add, none, two), nullptr);
  // f16 arithmetic and sorting have no CUDA kernel: they stay on the CPU.
  std::vector<InputInfo> halves = two;
  for (InputInfo& i : halves) i.dtype = DType::kF16;
  EXPECT_EQ(prepare(OpId::Add, none, halves), nullptr);
  EXPECT_EQ(prepare(OpId::Sort, attrs_of({AttrValue::Int(0)}), {two.data(), 1}), nullptr);
  EXPECT_EQ(prepare(OpId::Print, attrs_of({AttrValue::String("{}")}), {two.data(), 1}), nullptr);
}

TEST_F(CudaOps, ElementwiseWithBroadcasting) {
  const ops::Attrs none;
  for (OpId op : {OpId::Add, OpId::Sub, OpId::Mul, OpId::Div, OpId::Maximum, OpId::Minimum, OpId::Less})
    check(op, none, {make(DType::kF32, {3, 1, 5}, 1), make(DType::kF32, {4, 1}, 2)});
  check(OpId::Add, none, {make(DType::kI64, {1000}, 3, -100, 100), make(DType::kI64, {}, 4, -100, 100)});
  check(OpId::LogicalAnd, none, {make(DType::kBool, {7, 9}, 5), make(DType::kBool, {9}, 6)});
  for (OpId op : {OpId::Exp, OpId::Tanh, OpId::Gelu, OpId::Relu, OpId::Sigmoid, OpId::Sqrt, OpId::Round})
    check(op, none, {make(DType::kF32, {257, 33}, 7, 0.1, 3)});
  check(OpId::Where, none, {make(DType::kBool, {5, 1}, 8), make(DType::kF32, {5, 6}, 9), make(DType::kF32, {6}, 10)});
}

TEST_F(CudaOps, ReductionsSoftmaxAndNorms) {
  for (OpId op : {OpId::Sum, OpId::Mean, OpId::Max, OpId::Min}) {
    check(op, attrs_of({AttrValue::Ints({1}), AttrValue::Int(0)}), {make(DType::kF32, {6, 700, 5}, 11)});
    check(op, attrs_of({AttrValue::Ints({0, 2}), AttrValue::Int(1)}), {make(DType::kF32, {6, 7, 5}, 12)});
  }
  check(OpId::ArgMax, attrs_of({AttrValue::Int(1), AttrValue::Int(0)}), {make(DType::kF32, {9, 300}, 13)});
  check(OpId::Softmax, attrs_of({AttrValue::Int(1)}), {make(DType::kF32, {64, 1000}, 14, -10, 10)});
  check(OpId::LogSoftmax, attrs_of({AttrValue::Int(0)}), {make(DType::kF32, {50, 3}, 15, -10, 10)});
  check(OpId::LayerNorm, attrs_of({AttrValue::Float(1e-5)}),
        {make(DType::kF32, {33, 256}, 16), make(DType::kF32, {256}, 17), make(DType::kF32, {256}, 18)});
  check(OpId::CumSum, attrs_of({AttrValue::Int(1)}), {make(DType::kF32, {4, 100}, 19)}, 1e-5);
}

TEST_F(CudaOps, MatmulsOnCublasLt) {
  const ops::Attrs none;
  check(OpId::MatMul, none, {make(DType::kF32, {64, 784}, 20), make(DType::kF32, {784, 512}, 21)}, 1e-4);
  check(OpId::MatMul, none, {make(DType::kF32, {3, 17, 9}, 22), make(DType::kF32, {9, 5}, 23)}, 1e-4);
  check(OpId::MatMul, none, {make(DType::kF32, {2, 1, 4, 6}, 24), make(DType::kF32, {3, 6, 2}, 25)}, 1e-4);
  check(OpId::MatMul, none, {make(DType::kF32, {6}, 26), make(DType::kF32, {6, 4}, 27)}, 1e-4);
  for (int64_t act : {ops::attr::kActNone, ops::attr::kActRelu, ops::attr::kActTanh})
    check(OpId::FullyConnected, attrs_of({AttrValue::Int(act)}),
          {make(DType::kF32, {64, 512}, 28), make(DType::kF32, {512, 10}, 29), make(DType::kF32, {10}, 30)}, 1e-4);
}

TEST_F(CudaOps, DataMovement) {
  check(OpId::Transpose, attrs_of({AttrValue::Ints({2, 0, 1})}), {make(DType::kF32, {3, 4, 5}, 31)});
  check(OpId::Transpose, attrs_of({AttrValue::Ints({1, 0})}), {make(DType::kI64, {30, 7}, 32, -9, 9)});
  check(OpId::Take, attrs_of({AttrValue::Int(0)}), {make(DType::kF32, {10, 4}, 33), make(DType::kI64, {6}, 34, -10, 10)});
  check(OpId::Concatenate, attrs_of({AttrValue::Int(1)}),
        {make(DType::kF32, {3, 2, 4}, 35), make(DType::kF32, {3, 5, 4}, 36), make(DType::kF32, {3, 0, 4}, 37)});
}

TEST_F(CudaOps, TakeOutOfRangeIsAnErrorAtSynchronize) {
  Host x = make(DType::kF32, {4}, 38);
  Host idx = make(DType::kI64, {1}, 39);
  reinterpret_cast<int64_t*>(idx.bytes.data())[0] = 7;
  const ops::Attrs attrs = attrs_of({AttrValue::Int(0)});
  auto kernel = prepare(OpId::Take, attrs, infos({x, idx}));
  ASSERT_NE(kernel, nullptr);
  auto px = ctx_->allocate(x.bytes.size()), pi = ctx_->allocate(idx.bytes.size()), po = ctx_->allocate(64);
  ASSERT_TRUE(px.ok() && pi.ok() && po.ok());
  ASSERT_TRUE(ctx_->upload(*px, x.bytes.data(), x.bytes.size()).ok());
  ASSERT_TRUE(ctx_->upload(*pi, idx.bytes.data(), idx.bytes.size()).ok());
  TensorRef in[2] = {x.ref(), idx.ref()};
  in[0].data = *px;
  in[1].data = *pi;
  TensorRef o = idx.ref();
  o.dtype = DType::kF32;
  o.data = *po;
  ASSERT_TRUE(kernel->run(*ctx_, in, std::span<TensorRef>(&o, 1)).ok());
  const Status s = ctx_->synchronize();
  EXPECT_EQ(s.code(), StatusCode::kRuntimeError);
  EXPECT_NE(s.message().find("take"), std::string::npos) << s.message();
  EXPECT_TRUE(ctx_->synchronize().ok()) << "the flag is cleared once reported";
  for (void* p : {*px, *pi, *po}) ctx_->release(p);
}

TEST_F(CudaOps, ConvolutionAndPooling) {
  using ops::AttrValue;
  for (const char* pad : {"SAME", "VALID"}) {
    const ops::Attrs conv = attrs_of({AttrValue::Ints({1, 1}), AttrValue::Ints({1, 1}), AttrValue::String(pad),
                                      AttrValue::Int(1)});
    check(OpId::Conv2D, conv, {make(DType::kF32, {2, 16, 16, 8}, 40), make(DType::kF32, {3, 3, 8, 12}, 41)}, 1e-4);
    const ops::Attrs grouped = attrs_of({AttrValue::Ints({2, 2}), AttrValue::Ints({1, 1}), AttrValue::String(pad),
                                         AttrValue::Int(4)});
    check(OpId::Conv2D, grouped, {make(DType::kF32, {1, 15, 15, 8}, 42), make(DType::kF32, {3, 3, 2, 8}, 43)}, 1e-4);
    const ops::Attrs pool = attrs_of({AttrValue::Ints({3, 3}), AttrValue::Ints({2, 2}), AttrValue::String(pad)});
    check(OpId::MaxPool2D, pool, {make(DType::kF32, {2, 11, 11, 5}, 44)});
    check(OpId::AvgPool2D, pool, {make(DType::kF32, {2, 11, 11, 5}, 45)});
  }
}

}  // namespace
}  // namespace sg::kernels::cuda
