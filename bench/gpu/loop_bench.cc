// Per-iteration cost of a staged loop on the CUDA Session beyond its kernels, for
// two workloads of bench/models: rnn (for t in range(T): a 256x256 tanh cell) and
// loop_overhead (while i < n: one f32 add and the counter).
//
//   sg_gpu_loop_bench rnn RNN.sgraph WEIGHTS_DIR [--lo 100] [--hi 1100] [--runs 5]
//   sg_gpu_loop_bench loop_overhead LOOP.sgraph [--lo 2000] [--hi 12000] [--runs 3]
//
// WEIGHTS_DIR holds w.npy, u.npy, b.npy, the values rnn.sgraph was compiled with
// (bench/gpu/prepare.py). How it measures:
//   - Session: the median wall time of a run at `lo` and at `hi` iterations
//     (steps T, or n); the difference over hi - lo is the cost of one iteration,
//     without the run's fixed costs (copies in and out, the entry's other nodes).
//   - Kernels: the loop's own kernels, prepared through the CUDA backend
//     (kernels/cuda: the same kernels the Session runs), for every iteration the
//     condition (less on the counter), then the body (rnn: the fully connected
//     cell h @ u + (xs @ w + b)[t] with tanh; loop_overhead: the f32 add), and
//     the counter's add. Captured once as a CUDA graph of `hi` iterations and
//     replayed, timed with CUDA events: the device time of the kernels alone.
//     Also launched directly from a host loop with no synchronisation (timed with
//     events): what a loop of the same kernels costs when the host issues them.
//   - The figure: Session per iteration minus kernels per iteration.
// Before timing, the Session's result is checked (loop_overhead: acc == n; rnn:
// against the same graph on the CPU, max |gpu - cpu| <= 1e-4 * max |cpu|).
// The Session's loops are host-driven (the executor, over runtime/cuda/cuda_device.cc): each
// iteration reads its condition back through pinned memory. Exit 0 after
// measuring, 1 on an error, 77 without a GPU.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cuda/common.cuh"
#include "cuda/kernels.h"
#include "gpu_bench.h"
#include "npy.h"
#include "stagegraph/cuda.h"
#include "stagegraph/runtime.h"

namespace {

namespace kc = sg::kernels::cuda;
using namespace sg::bench_gpu;
using kc::cublas_status;  // for SG_CUDA_TRY and SG_CUBLAS_TRY
using kc::cuda_status;
using sg::DType;
using sg::ops::OpId;
using sg::kernels::InputInfo;
using sg::kernels::TensorRef;

const char* const kGoal = "<= 3 us (goal for device-side loops)";

TensorRef ref(DType dtype, std::initializer_list<int64_t> shape, void* data) {
  TensorRef r;
  r.dtype = dtype;
  r.rank = int(shape.size());
  int i = 0;
  for (int64_t d : shape) r.shape[i++] = d;
  r.data = data;
  return r;
}

InputInfo info(const TensorRef& r) {
  InputInfo in;
  in.dtype = r.dtype;
  in.rank = r.rank;
  for (int i = 0; i < r.rank; ++i) in.shape[i] = r.shape[i];
  return in;
}

// A prepared backend kernel with its operands; run() enqueues it.
struct Launch {
  std::unique_ptr<kc::Kernel> kernel;
  std::vector<TensorRef> in, out;
  sg::Status run(kc::Context& ctx) { return kernel->run(ctx, in, out); }
};

sg::Result<Launch> prepare(OpId op, sg::ops::Attrs attrs, std::vector<TensorRef> in, TensorRef out) {
  std::vector<InputInfo> infos;
  for (const TensorRef& r : in) infos.push_back(info(r));
  Launch l;
  l.kernel = kc::prepare(op, attrs, infos);
  if (l.kernel == nullptr)
    return sg::Status(sg::StatusCode::kUnsupported,
                      std::string("the CUDA backend has no kernel for ") + sg::ops::op_def(op).name);
  l.in = std::move(in);
  l.out = {out};
  return l;
}

// Device memory released with the context.
struct DeviceBuffers {
  kc::Context* ctx = nullptr;
  std::vector<void*> held;
  ~DeviceBuffers() {
    for (void* p : held) ctx->release(p);
  }
  sg::Result<void*> get(size_t bytes, const void* host = nullptr) {
    SG_ASSIGN_OR_RETURN(void* p, ctx->allocate(bytes));
    held.push_back(p);
    if (host != nullptr) SG_RETURN_IF_ERROR(ctx->upload(p, host, bytes));
    return p;
  }
};

// Device time per iteration of `enqueue(k)` for k = 0..iterations-1: launched
// directly (host loop, no synchronisation) and replayed as a captured CUDA graph.
struct KernelTimes {
  double launched_us = 0, graph_us = 0;
  std::string graph_note;  // why no graph figure, when capture failed
};

sg::Result<KernelTimes> time_kernels(kc::Context& ctx, int64_t iterations,
                                     const std::function<sg::Status(int64_t)>& enqueue) {
  kc::ContextImpl& cs = kc::state(ctx);
  KernelTimes t;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  SG_CUDA_TRY(cudaEventCreate(&e0), "event");
  SG_CUDA_TRY(cudaEventCreate(&e1), "event");
  struct Events {
    cudaEvent_t a, b;
    ~Events() {
      cudaEventDestroy(a);
      cudaEventDestroy(b);
    }
  } events{e0, e1};
  for (int64_t k = 0; k < std::min<int64_t>(iterations, 16); ++k) SG_RETURN_IF_ERROR(enqueue(k));  // warm-up
  SG_RETURN_IF_ERROR(ctx.synchronize());

  // The median over `reps` of what `launch` takes on the stream, per iteration.
  const auto per_iteration_us = [&](int reps, const auto& launch, double* out) -> sg::Status {
    std::vector<double> times;
    for (int rep = 0; rep < reps; ++rep) {
      SG_CUDA_TRY(cudaEventRecord(e0, cs.stream), "event");
      SG_RETURN_IF_ERROR(launch());
      SG_CUDA_TRY(cudaEventRecord(e1, cs.stream), "event");
      SG_RETURN_IF_ERROR(ctx.synchronize());
      float ms = 0;
      SG_CUDA_TRY(cudaEventElapsedTime(&ms, e0, e1), "event time");
      times.push_back(1000.0 * ms / double(iterations));
    }
    *out = median(times);
    return sg::Status::Ok();
  };
  const auto launch_each = [&]() -> sg::Status {
    for (int64_t k = 0; k < iterations; ++k) SG_RETURN_IF_ERROR(enqueue(k));
    return sg::Status::Ok();
  };
  SG_RETURN_IF_ERROR(per_iteration_us(3, launch_each, &t.launched_us));

  cudaGraph_t graph = nullptr;
  SG_CUDA_TRY(cudaStreamBeginCapture(cs.stream, cudaStreamCaptureModeThreadLocal), "stream capture");
  sg::Status captured = sg::Status::Ok();
  for (int64_t k = 0; k < iterations && captured.ok(); ++k) captured = enqueue(k);
  const cudaError_t ended = cudaStreamEndCapture(cs.stream, &graph);
  if (!captured.ok() || ended != cudaSuccess) {
    (void)cudaGetLastError();
    if (graph != nullptr) cudaGraphDestroy(graph);
    t.graph_note = !captured.ok() ? captured.message() : std::string(cudaGetErrorString(ended));
    return t;
  }
  cudaGraphExec_t exec = nullptr;
  const cudaError_t inst = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  if (inst != cudaSuccess) {
    (void)cudaGetLastError();
    t.graph_note = std::string("cudaGraphInstantiate: ") + cudaGetErrorString(inst);
    return t;
  }
  struct Exec {
    cudaGraphExec_t e;
    ~Exec() { cudaGraphExecDestroy(e); }
  } exec_guard{exec};
  SG_CUDA_TRY(cudaGraphLaunch(exec, cs.stream), "graph launch");  // warm-up (uploads the graph)
  SG_RETURN_IF_ERROR(ctx.synchronize());
  const auto replay = [&]() -> sg::Status {
    SG_CUDA_TRY(cudaGraphLaunch(exec, cs.stream), "graph launch");
    return sg::Status::Ok();
  };
  SG_RETURN_IF_ERROR(per_iteration_us(5, replay, &t.graph_us));
  return t;
}

// Median wall time (us) of `runs` Session runs after one untimed run.
sg::Result<double> time_session(sg::Session& s, int runs) {
  SG_RETURN_IF_ERROR(s.run());
  std::vector<double> t;
  for (int r = 0; r < runs; ++r) {
    const Clock::time_point t0 = Clock::now();
    SG_RETURN_IF_ERROR(s.run());
    t.push_back(us_since(t0));
  }
  return median(t);
}

sg::Result<std::unique_ptr<sg::Session>> cuda_session(const std::shared_ptr<const sg::Program>& program) {
  sg::SessionOptions options;
  auto gpu = sg::cuda_device(0);
  if (!gpu.ok()) return gpu.status();
  options.device = *gpu;
  return sg::Session::create(program, program->entries()[0].name, options);
}

bool no_device(const sg::Status& s) {
  return s.code() == sg::StatusCode::kUnsupported && s.message().find("no CUDA device") != std::string::npos;
}

struct Figures {
  double session_lo_us = 0, session_hi_us = 0;
  KernelTimes kernels;
};

int report(const std::string& name, int64_t lo, int64_t hi, const Figures& f) {
  const double per_iter = (f.session_hi_us - f.session_lo_us) / double(hi - lo);
  const bool have_graph = f.kernels.graph_note.empty();
  const double kernels = have_graph ? f.kernels.graph_us : f.kernels.launched_us;
  const double beyond = per_iter - kernels;
  std::printf("Session runs: %lld iterations %.1f us, %lld iterations %.1f us (medians)\n",
              static_cast<long long>(lo), f.session_lo_us, static_cast<long long>(hi), f.session_hi_us);
  std::printf("Session per iteration (host-driven loop):     %8.2f us\n", per_iter);
  if (have_graph)
    std::printf("its kernels per iteration (CUDA graph replay): %8.2f us\n", f.kernels.graph_us);
  else
    std::printf("its kernels as a CUDA graph: not measured (%s); the launched loop's figure is used\n",
                f.kernels.graph_note.c_str());
  std::printf("its kernels launched directly from a host loop: %6.2f us per iteration\n", f.kernels.launched_us);
  std::printf("beyond the kernels, per iteration:              %6.2f us\n", beyond);
  std::printf("row: %s | %.2f us (host-driven; Session %.2f us, kernels %.2f us%s per iteration) | %s | %s\n",
              name.c_str(), beyond, per_iter, kernels, have_graph ? "" : " launched", kGoal,
              beyond <= 3.0 ? "yes" : "no");
  return 0;
}

int run_loop_overhead(const std::string& graph, int64_t lo, int64_t hi, int runs) {
  const std::string name = "loop_overhead: cost per iteration beyond kernels";
  if (const std::string why = no_device_reason(); !why.empty()) return skip(name, kGoal, why);
  auto program = sg::Program::load_file(graph, sg::LoadOptions{});
  if (!program.ok()) return fail(graph, program.status());
  auto session = cuda_session(*program);
  if (!session.ok()) return no_device(session.status()) ? skip(name, kGoal, session.status().message())
                                                        : fail("Session::create", session.status());
  Figures f;
  for (int64_t n : {lo, hi}) {
    auto t = sg::Tensor::empty(DType::kI64, sg::Span<const int64_t>());
    if (!t.ok()) return fail("input", t.status());
    *static_cast<int64_t*>(t->data()) = n;
    if (sg::Status s = (*session)->set_input(0, *t); !s.ok()) return fail("set_input", s);
    auto us = time_session(**session, runs);
    if (!us.ok()) return fail("Session::run", us.status());
    auto out = (*session)->output_view(0);
    if (!out.ok()) return fail("output", out.status());
    const float acc = *static_cast<const float*>(out->data());
    if (out->dtype() != DType::kF32 || acc != float(n)) {
      std::fprintf(stderr, "error: loop_overhead(%lld) gave %g, expected %lld\n", static_cast<long long>(n),
                   double(acc), static_cast<long long>(n));
      return 1;
    }
    (n == lo ? f.session_lo_us : f.session_hi_us) = *us;
  }

  // The loop's kernels: less(i, n); acc + 1.0; i + 1 (values ping-pong between two
  // buffers, as a loop's carried values do).
  auto ctx_or = kc::Context::create(kc::ContextOptions{});
  if (!ctx_or.ok()) return fail("cuda context", ctx_or.status());
  kc::Context& ctx = **ctx_or;
  DeviceBuffers mem{&ctx, {}};
  const float zero_f = 0, one_f = 1;
  const int64_t zero_i = 0, one_i = 1, n_i = hi;
  void* p[8];
  const std::pair<size_t, const void*> init[8] = {{4, &zero_f}, {4, &zero_f}, {4, &one_f}, {8, &zero_i},
                                                  {8, &zero_i}, {8, &one_i},  {8, &n_i},   {1, nullptr}};
  for (int i = 0; i < 8; ++i) {
    auto b = mem.get(init[i].first, init[i].second);
    if (!b.ok()) return fail("device memory", b.status());
    p[i] = *b;
  }
  Launch less[2], add_f[2], add_i[2];
  for (int k = 0; k < 2; ++k) {
    const TensorRef acc_in = ref(DType::kF32, {}, p[k]), acc_out = ref(DType::kF32, {}, p[1 - k]);
    const TensorRef i_in = ref(DType::kI64, {}, p[3 + k]), i_out = ref(DType::kI64, {}, p[4 - k]);
    auto a = prepare(OpId::Less, {}, {i_in, ref(DType::kI64, {}, p[6])}, ref(DType::kBool, {}, p[7]));
    auto b = prepare(OpId::Add, {}, {acc_in, ref(DType::kF32, {}, p[2])}, acc_out);
    auto c = prepare(OpId::Add, {}, {i_in, ref(DType::kI64, {}, p[5])}, i_out);
    if (!a.ok() || !b.ok() || !c.ok()) return fail("prepare", !a.ok() ? a.status() : !b.ok() ? b.status() : c.status());
    less[k] = std::move(a).value();
    add_f[k] = std::move(b).value();
    add_i[k] = std::move(c).value();
  }
  auto times = time_kernels(ctx, hi, [&](int64_t k) -> sg::Status {
    SG_RETURN_IF_ERROR(less[k % 2].run(ctx));
    SG_RETURN_IF_ERROR(add_f[k % 2].run(ctx));
    return add_i[k % 2].run(ctx);
  });
  if (!times.ok()) return fail("kernels", times.status());
  f.kernels = *times;
  return report(name, lo, hi, f);
}

int run_rnn(const std::string& graph, const std::string& weights_dir, int64_t lo, int64_t hi, int runs) {
  const std::string name = "rnn (hidden 256): cost per iteration beyond kernels";
  if (const std::string why = no_device_reason(); !why.empty()) return skip(name, kGoal, why);
  sg::Tensor w, u, b;
  for (auto [t, file] : {std::pair{&w, "w"}, std::pair{&u, "u"}, std::pair{&b, "b"}}) {
    auto r = sg::tools::read_npy(weights_dir + "/" + file + ".npy");
    if (!r.ok()) return fail("weights", r.status());
    *t = std::move(r).value();
  }
  if (w.dtype() != DType::kF32 || w.shape().size() != 2 || u.dtype() != DType::kF32 || u.shape().size() != 2 ||
      b.dtype() != DType::kF32 || b.shape().size() != 1 || u.shape()[0] != u.shape()[1] ||
      w.shape()[1] != u.shape()[0] || b.shape()[0] != u.shape()[0]) {
    std::fprintf(stderr, "error: w.npy %s, u.npy %s, b.npy %s: expected f32 [I, H], [H, H], [H]\n",
                 sg::tools::describe(w).c_str(), sg::tools::describe(u).c_str(), sg::tools::describe(b).c_str());
    return 1;
  }
  const int64_t in_dim = w.shape()[0], hidden = u.shape()[0];
  auto program = sg::Program::load_file(graph, sg::LoadOptions{});
  if (!program.ok()) return fail(graph, program.status());
  auto session = cuda_session(*program);
  if (!session.ok()) return no_device(session.status()) ? skip(name, kGoal, session.status().message())
                                                        : fail("Session::create", session.status());
  // xs for the most steps; the runs at `lo` steps use its first rows.
  Rng rng(7);
  std::vector<float> xs(size_t(hi * in_dim));
  for (float& v : xs) v = rng.uniform(-1.0f, 1.0f);
  Figures f;
  for (int64_t steps : {lo, hi}) {
    const int64_t shape[2] = {steps, in_dim};
    const sg::Tensor x = sg::Tensor::wrap(DType::kF32, shape, xs.data());
    if (sg::Status s = (*session)->set_input(0, x); !s.ok()) return fail("set_input", s);
    auto us = time_session(**session, runs);
    if (!us.ok()) return fail("Session::run", us.status());
    (steps == lo ? f.session_lo_us : f.session_hi_us) = *us;
    if (steps != lo) continue;
    // The result against the same graph on the CPU.
    auto cpu = sg::Session::create(*program, (*program)->entries()[0].name, sg::SessionOptions{});
    if (!cpu.ok()) return fail("CPU Session::create", cpu.status());
    if (sg::Status s = (*cpu)->set_input(0, x); !s.ok()) return fail("CPU set_input", s);
    if (sg::Status s = (*cpu)->run(); !s.ok()) return fail("CPU Session::run", s);
    auto got = (*session)->output_view(0);
    auto want = (*cpu)->output_view(0);
    if (!got.ok() || !want.ok()) return fail("output", !got.ok() ? got.status() : want.status());
    if (got->numel() != hidden || want->numel() != hidden) {
      std::fprintf(stderr, "error: rnn gave %s, expected %lld values\n", sg::tools::describe(*got).c_str(),
                   static_cast<long long>(hidden));
      return 1;
    }
    double err = 0, scale = 0;
    for (int64_t i = 0; i < hidden; ++i) {
      const float g = static_cast<const float*>(got->data())[i], c = static_cast<const float*>(want->data())[i];
      err = std::max(err, double(std::fabs(g - c)));
      scale = std::max(scale, double(std::fabs(c)));
    }
    std::printf("output check (T = %lld): max |gpu - cpu| = %.3g, %.3g of the output's magnitude %.3g\n",
                static_cast<long long>(lo), err, scale > 0 ? err / scale : err, scale);
    if (!(err <= 1e-4 * scale)) {
      std::fprintf(stderr, "error: the GPU Session's rnn result differs from the CPU's\n");
      return 1;
    }
  }

  // The loop's kernels: less(t, T); h' = tanh(h @ u + proj[t]) (fully connected,
  // proj = xs @ w + b made once before the loop, as the compiled graph hoists it;
  // proj[t] is a row of it, where the graph slices it); t + 1.
  auto ctx_or = kc::Context::create(kc::ContextOptions{});
  if (!ctx_or.ok()) return fail("cuda context", ctx_or.status());
  kc::Context& ctx = **ctx_or;
  DeviceBuffers mem{&ctx, {}};
  const int64_t zero_i = 0, one_i = 1, steps_i = hi;
  std::vector<float> zeros(size_t(hidden), 0.0f);
  struct Want {
    size_t bytes;
    const void* host;
  };
  const Want want[11] = {{xs.size() * 4, xs.data()},        {size_t(w.nbytes()), w.data()},
                         {size_t(b.nbytes()), b.data()},    {size_t(u.nbytes()), u.data()},
                         {size_t(hi * hidden) * 4, nullptr}, {size_t(hidden) * 4, zeros.data()},
                         {size_t(hidden) * 4, zeros.data()}, {8, &zero_i},
                         {8, &zero_i},                       {8, &one_i},
                         {8, &steps_i}};
  void* p[12];
  for (int i = 0; i < 11; ++i) {
    auto buf = mem.get(want[i].bytes, want[i].host);
    if (!buf.ok()) return fail("device memory", buf.status());
    p[i] = *buf;
  }
  auto cond = mem.get(1);
  if (!cond.ok()) return fail("device memory", cond.status());
  p[11] = *cond;
  float* proj = static_cast<float*>(p[4]);
  sg::ops::Attrs no_act, tanh_act;
  no_act.values = {sg::ops::AttrValue::Int(sg::ops::attr::kActNone)};
  tanh_act.values = {sg::ops::AttrValue::Int(sg::ops::attr::kActTanh)};
  auto hoisted = prepare(OpId::FullyConnected, no_act,
                         {ref(DType::kF32, {hi, in_dim}, p[0]), ref(DType::kF32, {in_dim, hidden}, p[1]),
                          ref(DType::kF32, {hidden}, p[2])},
                         ref(DType::kF32, {hi, hidden}, proj));
  if (!hoisted.ok()) return fail("prepare", hoisted.status());
  if (sg::Status s = hoisted->run(ctx); !s.ok()) return fail("xs @ w + b", s);
  Launch less[2], add_i[2];
  std::vector<Launch> cell(2);
  for (int k = 0; k < 2; ++k) {
    const TensorRef t_in = ref(DType::kI64, {}, p[7 + k]), t_out = ref(DType::kI64, {}, p[8 - k]);
    auto a = prepare(OpId::Less, {}, {t_in, ref(DType::kI64, {}, p[10])}, ref(DType::kBool, {}, p[11]));
    auto c = prepare(OpId::Add, {}, {t_in, ref(DType::kI64, {}, p[9])}, t_out);
    auto fc = prepare(OpId::FullyConnected, tanh_act,
                      {ref(DType::kF32, {hidden}, p[5 + k]), ref(DType::kF32, {hidden, hidden}, p[3]),
                       ref(DType::kF32, {hidden}, proj)},
                      ref(DType::kF32, {hidden}, p[6 - k]));
    if (!a.ok() || !c.ok() || !fc.ok())
      return fail("prepare", !a.ok() ? a.status() : !c.ok() ? c.status() : fc.status());
    less[k] = std::move(a).value();
    add_i[k] = std::move(c).value();
    cell[size_t(k)] = std::move(fc).value();
  }
  auto times = time_kernels(ctx, hi, [&](int64_t k) -> sg::Status {
    SG_RETURN_IF_ERROR(less[k % 2].run(ctx));
    Launch& fc = cell[size_t(k % 2)];
    fc.in[2].data = proj + k * hidden;  // the row of step k
    SG_RETURN_IF_ERROR(fc.run(ctx));
    return add_i[k % 2].run(ctx);
  });
  if (!times.ok()) return fail("kernels", times.status());
  f.kernels = *times;
  return report(name, lo, hi, f);
}

int usage() {
  std::fprintf(stderr,
               "usage: sg_gpu_loop_bench rnn RNN.sgraph WEIGHTS_DIR [--lo N] [--hi N] [--runs N]\n"
               "       sg_gpu_loop_bench loop_overhead LOOP.sgraph [--lo N] [--hi N] [--runs N]\n");
  return 1;
}

int run(int argc, char** argv) {
  if (argc < 3) return usage();
  const std::string workload = argv[1], graph = argv[2];
  const bool rnn = workload == "rnn";
  if (!rnn && workload != "loop_overhead") return usage();
  int first = 3;
  std::string weights_dir;
  if (rnn) {
    if (argc < 4) return usage();
    weights_dir = argv[3];
    first = 4;
  }
  int64_t lo = rnn ? 100 : 2000, hi = rnn ? 1100 : 12000;
  int runs = rnn ? 5 : 3;
  for (int i = first; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--lo" && i + 1 < argc) {
      lo = parse_count("--lo", argv[++i]);
    } else if (arg == "--hi" && i + 1 < argc) {
      hi = parse_count("--hi", argv[++i]);
    } else if (arg == "--runs" && i + 1 < argc) {
      runs = int(parse_count("--runs", argv[++i]));
    } else {
      std::fprintf(stderr, "error: unknown argument '%s'\n", arg.c_str());
      return usage();
    }
  }
  if (hi <= lo) {
    std::fprintf(stderr, "error: --hi (%lld) must be more than --lo (%lld)\n", static_cast<long long>(hi),
                 static_cast<long long>(lo));
    return 1;
  }
  return rnn ? run_rnn(graph, weights_dir, lo, hi, runs) : run_loop_overhead(graph, lo, hi, runs);
}

}  // namespace

int main(int argc, char** argv) { return run(argc, argv); }
