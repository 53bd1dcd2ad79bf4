// Dispatch cost of the runtime (issue 7: <= 30 ns per node at -O0; issue 4: <= 100 ns
// per While iteration beyond its body; a Call about as cheap as a small node).
// Graphs are built with the runtime tests' graph builder, so no compiler is needed.
//   sg_runtime_bench --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>

#include "graph_builder.h"
#include "reference/kernel.h"
#include "stagegraph/runtime.h"
#include "test_graphs.h"

namespace sg::bench {
namespace {

using testing::FunctionSpec;
using testing::GraphSpec;
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

std::unique_ptr<Session> session_for(const GraphSpec& g, const std::string& entry) {
  const std::vector<uint8_t> bytes = testing::build_sgraph(g);
  // Misaligned on purpose: the Program then keeps its own copy of the bytes.
  std::vector<uint8_t> skewed(bytes.size() + 1);
  std::memcpy(skewed.data() + 1, bytes.data(), bytes.size());
  auto program = Program::load_memory(std::span<const uint8_t>(skewed).subspan(1));
  if (!program.ok()) return nullptr;
  auto s = Session::create(*program, entry);
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
  auto s = session_for(testing::while_sum_graph(), "total");
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

}  // namespace
}  // namespace sg::bench

BENCHMARK_MAIN();
