// Dispatch cost of the runtime (issue 7: <= 30 ns per node at -O0; issue 4: <= 100 ns
// per While iteration beyond its body, and the time per step of an RNN with T = 100
// and hidden 256; a Call about as cheap as a small node), and independent nodes run
// concurrently (issue 7's scheduler: two 256x1024x1024 matmuls on two threads).
// Graphs are built with schema/builder/graph_builder.h, so no compiler is needed.
//   sg_runtime_bench --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <vector>

#include "graph_builder.h"
#include "interface/kernel.h"
#include "stagegraph/runtime.h"

namespace sg::bench {
namespace {

using testing::FunctionSpec;
using testing::GraphSpec;
using testing::ShapeSpec;
using testing::shape;

constexpr int kChain = 1000;

// def chain(x: DTYPE[16]): v = x; 1000 times: v = v + x; return v
GraphSpec add_chain(DType dtype) {
  GraphSpec g;
  FunctionSpec f;
  f.name = "chain";
  const uint32_t x = f.param(dtype, shape({16}));
  uint32_t v = x;
  for (int k = 0; k < kChain; ++k) v = f.op("add", {v, x}, dtype, shape({16}));
  f.results = {v};
  g.add_entry("chain", g.add_function(std::move(f)), {"x"}, {"y"});
  return g;
}

// def calls(x: f32[16]): v = x; 1000 times: v = ident(v); return v   (ident returns its argument)
GraphSpec call_chain() {
  GraphSpec g;
  FunctionSpec main;
  main.name = "calls";
  const uint32_t x = main.param(DType::kF32, shape({16}));
  uint32_t v = x;
  for (int k = 0; k < kChain; ++k)
    v = main.control(fb::NodeKind::Call, {1}, {v}, {{DType::kF32, shape({16})}})[0];
  main.results = {v};
  FunctionSpec ident;
  ident.name = "ident";
  ident.results = {ident.param(DType::kF32, shape({16}))};
  g.add_function(std::move(main));
  g.add_function(std::move(ident));
  g.add_entry("calls", 0, {"x"}, {"y"});
  return g;
}

// def total(n: i64):
//     i = 0; s = 0
//     while i < n: s = s + i; i = i + 1
//     return s
GraphSpec while_sum() {
  GraphSpec g;
  const int32_t zero = g.add_constant<int64_t>({0});
  const int32_t one = g.add_constant<int64_t>({1});
  const auto i64 = std::pair<DType, ShapeSpec>{DType::kI64, {}};
  FunctionSpec cond;  // (i, s, n) -> i < n
  cond.name = "total_cond";
  {
    const uint32_t i = cond.param(DType::kI64, {}), s = cond.param(DType::kI64, {}), n = cond.param(DType::kI64, {});
    (void)s;
    cond.results = {cond.op("less", {i, n}, DType::kBool, {})};
  }
  FunctionSpec body;  // (i, s, n) -> (i + 1, s + i, n)
  body.name = "total_body";
  {
    const uint32_t i = body.param(DType::kI64, {}), s = body.param(DType::kI64, {}), n = body.param(DType::kI64, {});
    const uint32_t k1 = body.value(DType::kI64, {}, one);
    const uint32_t s2 = body.op("add", {s, i}, DType::kI64, {});
    const uint32_t i2 = body.op("add", {i, k1}, DType::kI64, {});
    body.results = {i2, s2, n};
  }
  FunctionSpec main;
  main.name = "total";
  const uint32_t n = main.param(DType::kI64, {});
  const uint32_t k0 = main.value(DType::kI64, {}, zero);
  main.results = {main.control(fb::NodeKind::While, {1, 2}, {k0, k0, n}, {i64, i64, i64})[1]};
  g.add_function(std::move(main));
  g.add_function(std::move(cond));
  g.add_function(std::move(body));
  g.add_entry("total", 0, {"n"}, {"output_0"});
  return g;
}

// The While body of BM_WhileScalar run straight: 1000 times
// `c = i < n; s = s + i; i = i + 1` on i64 scalars, so a While iteration's cost
// beyond its body is its time minus this one's per step.
GraphSpec scalar_steps() {
  GraphSpec g;
  const int32_t one = g.add_constant<int64_t>({1});
  FunctionSpec f;
  f.name = "steps";
  const uint32_t n = f.param(DType::kI64, {});
  const uint32_t k1 = f.value(DType::kI64, {}, one);
  uint32_t i = k1, s = k1;
  for (int k = 0; k < kChain; ++k) {
    f.op("less", {i, n}, DType::kBool, {});  // the loop's test: run, its result unread
    s = f.op("add", {s, i}, DType::kI64, {});
    i = f.op("add", {i, k1}, DType::kI64, {});
  }
  f.results = {s};
  g.add_entry("steps", g.add_function(std::move(f)), {"n"}, {"s"});
  return g;
}

// The body of an Elman RNN step as graph-compile -O2 stages
//     for t in range(xs.shape[0]): h = sg.tanh(xs[t] @ w + h @ u + b)
// (xs: f32[T, 64], hidden 256, weights constants): a While over (t, h, xs, T) whose
// body is slice, matmul, fully_connected (x_t @ w plus h @ u), add b, tanh, t + 1.
constexpr int64_t kRnnIn = 64, kRnnHidden = 256;

template <class T>
int32_t add_bytes(GraphSpec& g, const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  g.constants.push_back(std::move(bytes));
  return int32_t(g.constants.size() - 1);
}

std::vector<float> weights(size_t n, float scale) {
  std::vector<float> v(n);
  uint32_t x = 12345;  // a fixed LCG: the values only need to be varied and small
  for (float& f : v) {
    x = x * 1664525u + 1013904223u;
    f = scale * (float(x >> 8) / float(1u << 24) - 0.5f);
  }
  return v;
}

GraphSpec rnn_graph() {
  GraphSpec g;
  g.symbols = {"T"};
  const int32_t zero = g.add_constant<int64_t>({0});
  const int32_t one = g.add_constant<int64_t>({1});
  const int32_t h0 = add_bytes(g, std::vector<float>(kRnnHidden, 0.0f));
  const int32_t w = add_bytes(g, weights(size_t(kRnnIn * kRnnHidden), 0.25f));
  const int32_t u = add_bytes(g, weights(size_t(kRnnHidden * kRnnHidden), 0.125f));
  const int32_t b = add_bytes(g, weights(size_t(kRnnHidden), 0.1f));
  const testing::ShapeSpec xs_shape = {testing::sym(0), {kRnnIn, -1}};
  const auto i64 = std::pair<DType, testing::ShapeSpec>{DType::kI64, {}};
  const auto hidden = std::pair<DType, testing::ShapeSpec>{DType::kF32, shape({kRnnHidden})};
  const auto xs_type = std::pair<DType, testing::ShapeSpec>{DType::kF32, xs_shape};

  FunctionSpec main;
  main.name = "rnn";
  const uint32_t xs = main.param(DType::kF32, xs_shape);
  const uint32_t steps = main.op("shape_dim", {xs}, DType::kI64, {});
  main.nodes.back().attrs = {{"axis", ops::AttrValue::Int(0)}};
  const uint32_t k0 = main.value(DType::kI64, {}, zero);
  const uint32_t h = main.value(DType::kF32, shape({kRnnHidden}), h0);
  main.results = {main.control(fb::NodeKind::While, {1, 2}, {k0, h, xs, steps}, {i64, hidden, xs_type, i64})[1]};

  FunctionSpec cond;
  cond.name = "rnn_cond";
  {
    const uint32_t t = cond.param(DType::kI64, {});
    cond.param(DType::kF32, shape({kRnnHidden}));
    cond.param(DType::kF32, xs_shape);
    cond.results = {cond.op("less", {t, cond.param(DType::kI64, {})}, DType::kBool, {})};
  }
  FunctionSpec body;
  body.name = "rnn_body";
  {
    const uint32_t t = body.param(DType::kI64, {});
    const uint32_t hb = body.param(DType::kF32, shape({kRnnHidden}));
    const uint32_t x = body.param(DType::kF32, xs_shape);
    const uint32_t n = body.param(DType::kI64, {});
    const uint32_t t1 = body.op("add", {t, body.value(DType::kI64, {}, one)}, DType::kI64, {});
    const uint32_t xt = body.op("slice", {x, t}, DType::kF32, shape({kRnnIn}));
    body.nodes.back().attrs = {{"begin", ops::AttrValue::Ints({0, 0})},
                               {"end", ops::AttrValue::Ints({0, 0})},
                               {"step", ops::AttrValue::Ints({1, 1})},
                               {"flags", ops::AttrValue::Ints({ops::attr::kIndex | ops::attr::kDynBegin, 0})}};
    const uint32_t hu = body.op("matmul", {hb, body.value(DType::kF32, shape({kRnnHidden, kRnnHidden}), u)},
                                DType::kF32, shape({kRnnHidden}));
    const uint32_t fc = body.op("fully_connected", {xt, body.value(DType::kF32, shape({kRnnIn, kRnnHidden}), w), hu},
                                DType::kF32, shape({kRnnHidden}));
    body.nodes.back().attrs = {{"activation", ops::AttrValue::Int(ops::attr::kActNone)}};
    const uint32_t sum = body.op("add", {fc, body.value(DType::kF32, shape({kRnnHidden}), b)}, DType::kF32,
                                 shape({kRnnHidden}));
    body.results = {t1, body.op("tanh", {sum}, DType::kF32, shape({kRnnHidden})), x, n};
  }
  g.add_function(std::move(main));
  g.add_function(std::move(cond));
  g.add_function(std::move(body));
  g.add_entry("rnn", 0, {"xs"}, {"h"});
  return g;
}

// def two(x: f32[256, 1024]): return x @ w1 + x @ w2     (w1, w2: f32[1024, 1024] constants)
constexpr int64_t kRows = 256, kDepth = 1024;

GraphSpec two_matmuls_graph() {
  GraphSpec g;
  const int32_t w1 = add_bytes(g, weights(size_t(kDepth * kDepth), 0.05f));
  const int32_t w2 = add_bytes(g, weights(size_t(kDepth * kDepth), -0.05f));
  FunctionSpec f;
  f.name = "two";
  const testing::ShapeSpec sq = shape({kDepth, kDepth}), out = shape({kRows, kDepth});
  const uint32_t x = f.param(DType::kF32, shape({kRows, kDepth}));
  const uint32_t a = f.op("matmul", {x, f.value(DType::kF32, sq, w1)}, DType::kF32, out);
  const uint32_t b = f.op("matmul", {x, f.value(DType::kF32, sq, w2)}, DType::kF32, out);
  f.results = {f.op("add", {a, b}, DType::kF32, out)};
  g.add_entry("two", g.add_function(std::move(f)), {"x"}, {"y"});
  return g;
}

std::unique_ptr<Session> session_for(const GraphSpec& g, const std::string& entry,
                                     const SessionOptions& options = {}) {
  const std::vector<uint8_t> bytes = testing::build_sgraph(g);
  // Misaligned on purpose: the Program then keeps its own copy of the bytes.
  std::vector<uint8_t> skewed(bytes.size() + 1);
  std::memcpy(skewed.data() + 1, bytes.data(), bytes.size());
  auto program = Program::load_memory(std::span<const uint8_t>(skewed).subspan(1));
  if (!program.ok()) return nullptr;
  auto s = Session::create(*program, entry, options);
  return s.ok() ? std::move(s).value() : nullptr;
}

Tensor filled(DType dtype, int64_t n) { return Tensor::zeros(dtype, std::span<const int64_t>(&n, 1)).value(); }

void per_item(benchmark::State& state, const char* name, double items) {
  state.counters[name] =
      benchmark::Counter(items, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void run_or_skip(benchmark::State& state, Session& s) {
  for (auto _ : state) {
    const Status st = s.run();
    if (!st.ok()) {
      state.SkipWithError(st.message().c_str());
      break;
    }
  }
}

void BM_AddChain(benchmark::State& state, DType dtype) {
  auto s = session_for(add_chain(dtype), "chain");
  if (s == nullptr || !s->set_input("x", filled(dtype, 16)).ok()) {
    state.SkipWithError("setup failed");
    return;
  }
  run_or_skip(state, *s);
  per_item(state, "per_node", kChain);
}
BENCHMARK_CAPTURE(BM_AddChain, f32, DType::kF32);
BENCHMARK_CAPTURE(BM_AddChain, i32, DType::kI32);

// The kernel alone, called directly: what a node costs without the runtime.
void BM_AddKernelOnly(benchmark::State& state, DType dtype) {
  Tensor a = filled(dtype, 16), out = filled(dtype, 16);
  kernels::TensorRef refs[3];
  for (kernels::TensorRef* r : {&refs[0], &refs[1]}) {
    r->dtype = dtype;
    r->rank = 1;
    r->shape[0] = 16;
    r->data = a.data();
  }
  refs[2] = refs[0];
  refs[2].data = out.data();
  const kernels::KernelFn fn = kernels::reference_kernel(ops::OpId::Add);
  const kernels::KernelContext ctx;
  for (auto _ : state) {
    const Status st = fn(ctx, {}, std::span<const kernels::TensorRef>(refs, 2), std::span<kernels::TensorRef>(refs + 2, 1));
    benchmark::DoNotOptimize(st.ok());
  }
}
BENCHMARK_CAPTURE(BM_AddKernelOnly, f32_reference, DType::kF32);
BENCHMARK_CAPTURE(BM_AddKernelOnly, i32_reference, DType::kI32);

// while i < n: s = s + i; i = i + 1    (cond: 1 node, body: 2 nodes, all i64 scalars)
void BM_WhileScalar(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto s = session_for(while_sum(), "total");
  Tensor t = Tensor::empty(DType::kI64, {}).value();
  *t.data_as<int64_t>() = n;
  if (s == nullptr || !s->set_input("n", t).ok()) {
    state.SkipWithError("setup failed");
    return;
  }
  run_or_skip(state, *s);
  per_item(state, "per_iteration", double(n));
}
BENCHMARK(BM_WhileScalar)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_ScalarBodyStraight(benchmark::State& state) {
  auto s = session_for(scalar_steps(), "steps");
  Tensor t = Tensor::empty(DType::kI64, {}).value();
  *t.data_as<int64_t>() = 5;
  if (s == nullptr || !s->set_input("n", t).ok()) {
    state.SkipWithError("setup failed");
    return;
  }
  run_or_skip(state, *s);
  per_item(state, "per_step", kChain);
}
BENCHMARK(BM_ScalarBodyStraight);

// Time per step of the RNN above, T = 100: the While's overhead beside real work.
void BM_RnnStep(benchmark::State& state) {
  const int64_t steps = state.range(0);
  auto s = session_for(rnn_graph(), "rnn");
  const std::vector<float> xs = weights(size_t(steps * kRnnIn), 2.0f);
  const int64_t dims[2] = {steps, kRnnIn};
  Tensor t = Tensor::empty(DType::kF32, dims).value();
  std::memcpy(t.data(), xs.data(), xs.size() * sizeof(float));
  if (s == nullptr || !s->set_input("xs", t).ok()) {
    state.SkipWithError("setup failed");
    return;
  }
  run_or_skip(state, *s);
  per_item(state, "per_step", double(steps));
}
BENCHMARK(BM_RnnStep)->Arg(100)->Unit(benchmark::kMicrosecond);

void BM_CallEmpty(benchmark::State& state) {
  auto s = session_for(call_chain(), "calls");
  if (s == nullptr || !s->set_input("x", filled(DType::kF32, 16)).ok()) {
    state.SkipWithError("setup failed");
    return;
  }
  run_or_skip(state, *s);
  per_item(state, "per_call", kChain);
}
BENCHMARK(BM_CallEmpty);

// Two independent matmuls: args are (threads, waves). With waves each matmul runs on
// one thread, side by side; without, one after the other on all threads.
void BM_TwoMatmuls(benchmark::State& state) {
  SessionOptions options;
  options.num_threads = int(state.range(0));
  options.concurrent_nodes = state.range(1) != 0;
  auto s = session_for(two_matmuls_graph(), "two", options);
  const int64_t dims[2] = {kRows, kDepth};
  Tensor x = Tensor::empty(DType::kF32, dims).value();
  const std::vector<float> xs = weights(size_t(kRows * kDepth), 1.0f);
  std::memcpy(x.data(), xs.data(), xs.size() * sizeof(float));
  if (s == nullptr || !s->set_input("x", x).ok()) {
    state.SkipWithError("setup failed");
    return;
  }
  run_or_skip(state, *s);
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * 2.0 * double(kRows) * double(kDepth) * double(kDepth) * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
  state.counters["waves"] = double(s->schedule_stats().waves);
}
BENCHMARK(BM_TwoMatmuls)->Args({1, 0})->Args({2, 0})->Args({2, 1})->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace sg::bench

BENCHMARK_MAIN();
