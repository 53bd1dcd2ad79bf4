// elementwise_chain gives the bytes of its steps run one node at a time: on the
// backend (each step's prepared kernel) and on the reference kernels, across
// block and tile boundaries, with scalar operands, NaN and infinities, on 1 and
// 2 threads.
#include <cstring>
#include <limits>

#include "xnnpack/xnn_common.h"
#include "xnnpack/xnn_tester.h"

namespace sg::kernels::testing {
namespace {

using ops::OpId;

struct Step {
  OpId op;
  int64_t a, b;  // operands: inputs, then steps; b = -1 for a unary op
};

// `outputs` empty: the one output is the last step's (no `outputs` attribute).
ops::Attrs chain_attrs(const std::vector<Step>& steps, std::vector<int64_t> outputs = {}) {
  std::vector<int64_t> v;
  for (const Step& s : steps) v.insert(v.end(), {int64_t(s.op), s.a, s.b});
  ops::Attrs a;
  a.values = {ops::AttrValue::Ints(std::move(v))};
  if (!outputs.empty()) a.values.push_back(ops::AttrValue::Ints(std::move(outputs)));
  return a;
}

// Runs the steps one node at a time (prepared kernels when `backend`, else the
// reference kernels) and returns the inputs, then every step's result.
std::vector<HostTensor> unfused_values(const std::vector<Step>& steps, std::vector<HostTensor>& inputs, bool backend,
                                       void* pool) {
  std::vector<HostTensor> values = inputs;
  for (const Step& s : steps) {
    std::vector<HostTensor> operands = {values[size_t(s.a)]};
    if (s.b >= 0) operands.push_back(values[size_t(s.b)]);
    std::vector<TensorRef> refs;
    std::vector<InputInfo> infos;
    for (HostTensor& t : operands) {
      refs.push_back(t.ref());
      infos.push_back(info_of(t, false));
    }
    HostTensor out(DType::kF32, infer_shape(s.op, {}, operands));
    TensorRef out_ref = out.ref();
    KernelContext ctx;
    ctx.threadpool = pool;
    std::unique_ptr<PreparedKernel> k = backend ? xnnpack_prepare(s.op, {}, infos) : nullptr;
    EXPECT_EQ(k != nullptr, backend) << ops::op_def(s.op).name;
    const Status st = k ? k->run(ctx, refs, std::span(&out_ref, 1))
                        : reference_kernel(s.op)(ctx, {}, refs, std::span(&out_ref, 1));
    EXPECT_TRUE(st.ok()) << st.message();
    values.push_back(std::move(out));
  }
  return values;
}

HostTensor unfused(const std::vector<Step>& steps, std::vector<HostTensor>& inputs, bool backend, void* pool) {
  return unfused_values(steps, inputs, backend, pool).back();
}

void expect_same_bytes(const HostTensor& got, const HostTensor& want, const std::string& what) {
  ASSERT_EQ(got.numel(), want.numel()) << what;
  int bad = 0;
  for (int64_t i = 0; i < want.numel() && bad < 5; ++i) {
    const float g = float(got.at(i)), w = float(want.at(i));
    if (std::memcmp(&g, &w, sizeof g) != 0) {
      ++bad;
      ADD_FAILURE() << what << ": element " << i << ": got " << g << ", want " << w;
    }
  }
}

void check_chain(const std::vector<Step>& steps, const std::vector<int64_t>& shape, bool scalar_second) {
  ASSERT_TRUE(xnnpack_init().ok());
  HostTensor x = HostTensor::random(DType::kF32, shape, 1, -4, 4);
  HostTensor s = scalar_second ? HostTensor::scalar(DType::kF32, 0.75) : HostTensor::random(DType::kF32, shape, 2);
  HostTensor y = HostTensor::random(DType::kF32, shape, 3, -4, 4);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  if (x.numel() > 300) {
    x.set(3, nan);
    x.set(257, inf);
    y.set(299, -inf);
    x.set(299, inf);  // inf + -inf
  }
  std::vector<HostTensor> in = {x, s, y};
  std::vector<InputInfo> infos;
  for (HostTensor& t : in) infos.push_back(info_of(t, false));
  const ops::Attrs attrs = chain_attrs(steps);
  std::unique_ptr<PreparedKernel> chain = xnnpack_prepare(OpId::ElementwiseChain, attrs, infos);
  ASSERT_NE(chain, nullptr);
  EXPECT_EQ(std::string(chain->name()).rfind("sg:elementwise_chain_f32(", 0), 0u) << chain->name();
  std::vector<TensorRef> refs;
  for (HostTensor& t : in) refs.push_back(t.ref());
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    const std::string what = shape_string(shape) + " on " + std::to_string(threads) + " threads";
    HostTensor got(DType::kF32, shape);
    got.poison();
    TensorRef got_ref = got.ref();
    KernelContext ctx;
    ctx.threadpool = pool.get();
    const Status st = chain->run(ctx, refs, std::span(&got_ref, 1));
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_TRUE(got.guard_intact()) << what;
    expect_same_bytes(got, unfused(steps, in, true, pool.get()), "backend " + what);

    HostTensor ref(DType::kF32, shape);
    TensorRef ref_out = ref.ref();
    ASSERT_TRUE(reference_kernel(OpId::ElementwiseChain)(ctx, attrs, refs, std::span(&ref_out, 1)).ok());
    expect_same_bytes(ref, unfused(steps, in, false, nullptr), "reference " + what);
  }
}

// relu(tanh(x * s + y) - x * y): inputs 0..2, steps from 3.
const std::vector<Step> kTree = {{OpId::Mul, 0, 1}, {OpId::Add, 3, 2}, {OpId::Tanh, 4, -1},
                                 {OpId::Mul, 0, 2}, {OpId::Sub, 5, 6}, {OpId::Relu, 7, -1}};
// minimum(gelu(x / s), y) then maximum with x, div by y.
const std::vector<Step> kEveryOp = {{OpId::Div, 0, 1},     {OpId::Gelu, 3, -1}, {OpId::Minimum, 4, 2},
                                    {OpId::Maximum, 5, 0}, {OpId::Div, 6, 2},   {OpId::Add, 7, 1}};
// Adam's step: p - lr * m / (sqrt(v) / c + eps), with x, s, y as p, m and v (NaN
// where v < 0, as the unfused sqrt gives).
const std::vector<Step> kAdam = {{OpId::Sqrt, 2, -1}, {OpId::Div, 3, 1}, {OpId::Add, 4, 1},
                                 {OpId::Div, 1, 5},   {OpId::Mul, 6, 1}, {OpId::Sub, 0, 7}};

TEST(XnnpackElementwiseChain, HasTheUnfusedNodesBytes) {
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{
           {1}, {15}, {256}, {257}, {3, 333}, {17, 1031}, {0, 4}}) {
    for (bool scalar : {true, false}) {
      SCOPED_TRACE(::testing::Message() << shape_string(shape) << (scalar ? " scalar s" : ""));
      check_chain(kTree, shape, scalar);
      check_chain(kEveryOp, shape, scalar);
      check_chain(kAdam, shape, scalar);
    }
  }
}

// Adam's whole update of one parameter, the compiler's chain with three outputs.
// Inputs: p, g, m, v, then the scalars b1, 1 - b1, b2, 1 - b2, step, c2, eps (0..10);
// step j is value 11 + j. Outputs: m' (step 2), v' (step 6), p' (step 12).
const std::vector<Step> kAdamUpdate = {
    {OpId::Mul, 4, 2},  {OpId::Mul, 5, 1},   {OpId::Add, 11, 12},                      // m'
    {OpId::Mul, 6, 3},  {OpId::Mul, 1, 1},   {OpId::Mul, 7, 15},  {OpId::Add, 14, 16},  // v'
    {OpId::Mul, 8, 13}, {OpId::Sqrt, 17, -1}, {OpId::Div, 19, 9}, {OpId::Add, 20, 10},
    {OpId::Div, 18, 21}, {OpId::Sub, 0, 22}};                                           // p'
const std::vector<int64_t> kAdamOutputs = {2, 6, 12};

void check_adam_update(const std::vector<int64_t>& shape) {
  ASSERT_TRUE(xnnpack_init().ok());
  std::vector<HostTensor> in = {HostTensor::random(DType::kF32, shape, 1, -4, 4),
                                HostTensor::random(DType::kF32, shape, 2, -4, 4),
                                HostTensor::random(DType::kF32, shape, 3, -1, 1),
                                HostTensor::random(DType::kF32, shape, 4, 0, 2)};
  for (double c : {0.9, 0.1, 0.999, 0.001, 0.0003, 0.03, 1e-8}) in.push_back(HostTensor::scalar(DType::kF32, c));
  if (in[0].numel() > 300) {
    in[1].set(5, std::numeric_limits<double>::quiet_NaN());
    in[1].set(260, std::numeric_limits<double>::infinity());
    in[3].set(299, -1.0);  // NaN from sqrt, as the unfused node gives
  }
  std::vector<InputInfo> infos;
  std::vector<TensorRef> refs;
  for (HostTensor& t : in) {
    infos.push_back(info_of(t, false));
    refs.push_back(t.ref());
  }
  const ops::Attrs attrs = chain_attrs(kAdamUpdate, kAdamOutputs);
  std::unique_ptr<PreparedKernel> chain = xnnpack_prepare(OpId::ElementwiseChain, attrs, infos);
  ASSERT_NE(chain, nullptr);
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    KernelContext ctx;
    ctx.threadpool = pool.get();
    const std::string what = shape_string(shape) + " on " + std::to_string(threads) + " threads";
    for (bool backend : {true, false}) {
      std::vector<HostTensor> got(3, HostTensor(DType::kF32, shape));
      std::vector<TensorRef> outs;
      for (HostTensor& g : got) {
        g.poison();
        outs.push_back(g.ref());
      }
      const Status st = backend ? chain->run(ctx, refs, outs)
                                : reference_kernel(OpId::ElementwiseChain)(ctx, attrs, refs, outs);
      ASSERT_TRUE(st.ok()) << st.message();
      const std::vector<HostTensor> want = unfused_values(kAdamUpdate, in, backend, pool.get());
      for (size_t k = 0; k < 3; ++k) {
        EXPECT_TRUE(got[k].guard_intact()) << what;
        expect_same_bytes(got[k], want[in.size() + size_t(kAdamOutputs[k])],
                          (backend ? "backend " : "reference ") + what + " output " + std::to_string(k));
      }
    }
  }
}

TEST(XnnpackElementwiseChain, SeveralOutputsHaveTheUnfusedNodesBytes) {
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{1}, {255}, {257}, {3, 333}, {17, 1031}, {0, 4}}) {
    SCOPED_TRACE(shape_string(shape));
    check_adam_update(shape);
  }
}

TEST(XnnpackElementwiseChain, SeveralOutputsNeedTheirCount) {
  ASSERT_TRUE(xnnpack_init().ok());
  HostTensor x = HostTensor::random(DType::kF32, {8}, 1);
  const std::vector<InputInfo> infos = {info_of(x, false)};
  const ops::Attrs attrs = chain_attrs({{OpId::Relu, 0, -1}, {OpId::Tanh, 1, -1}}, {0, 1});
  std::unique_ptr<PreparedKernel> chain = xnnpack_prepare(OpId::ElementwiseChain, attrs, infos);
  ASSERT_NE(chain, nullptr);
  HostTensor a(DType::kF32, {8});
  TensorRef in = x.ref(), out = a.ref();
  KernelContext ctx;
  // One output for a chain of two: the reference kernel's error, not a write past it.
  EXPECT_FALSE(chain->run(ctx, std::span(&in, 1), std::span(&out, 1)).ok());
}

TEST(XnnpackElementwiseChain, TakesOnlyF32) {
  ASSERT_TRUE(xnnpack_init().ok());
  HostTensor i = HostTensor::random(DType::kI32, {8}, 1);
  const std::vector<InputInfo> infos = {info_of(i, false), info_of(i, false)};
  EXPECT_EQ(xnnpack_prepare(OpId::ElementwiseChain, chain_attrs({{OpId::Add, 0, 1}}), infos), nullptr);
}

}  // namespace
}  // namespace sg::kernels::testing
