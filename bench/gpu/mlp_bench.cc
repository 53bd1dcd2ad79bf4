// The MLP of bench/models/mlp.py (784-512-512-10, relu, weights in the graph) at
// a large batch on the CUDA Session, against the same GEMM chain done directly:
// cuBLASLt with the same layouts, bias epilogue and algorithm choice (TF32 off),
// and relu by the backend's own activation kernel, on one stream.
//
//   sg_gpu_mlp_bench MLP.sgraph WEIGHTS_DIR [--batch 4096] [--runs 50]
//
// WEIGHTS_DIR holds w1.npy, b1.npy, ... w3.npy, b3.npy, the values the graph was
// compiled with (bench/gpu/prepare.py writes both). Both sides copy the same
// input in from pinned host memory and the output back to it, and are timed per
// run with the host clock to the end of the run (Session::run returns when its
// results are on the host); runs alternate between the two after warm-up, and
// the figure is the ratio of the medians. The baseline's GEMM chain alone is also
// timed with CUDA events. Before timing, the outputs are compared (max |a - b| <=
// 1e-4 * max |b|). Exit 0 after measuring, 1 on an error, 77 without a GPU.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstring>
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

const char* const kName = "MLP 784-512-512-10 b4096: Session / cuBLASLt alone";
const char* const kGoal = ">= 90%";

// One fully connected layer run directly on cuBLASLt, as kernels/cuda/gemm.cu
// lays it out: row-major o[M, N] = x[M, K] w[K, N] + bias is column-major
// o^T = w^T x^T, with w as cuBLASLt's A (N x K, ld N) and x as its B (K x M).
class DirectLayer {
 public:
  ~DirectLayer() {
    if (desc_ != nullptr) cublasLtMatmulDescDestroy(desc_);
    for (cublasLtMatrixLayout_t l : {la_, lb_, lc_})
      if (l != nullptr) cublasLtMatrixLayoutDestroy(l);
  }

  sg::Status init(kc::ContextImpl& s, int64_t m, int64_t k, int64_t n, const float* bias) {
    m_ = m, k_ = k, n_ = n;
    SG_CUBLAS_TRY(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F), "matmul descriptor");
    const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    SG_CUBLAS_TRY(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi), "epilogue");
    SG_CUBLAS_TRY(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias),
                  "bias pointer");
    SG_CUBLAS_TRY(cublasLtMatrixLayoutCreate(&la_, CUDA_R_32F, uint64_t(n), uint64_t(k), n), "layout");
    SG_CUBLAS_TRY(cublasLtMatrixLayoutCreate(&lb_, CUDA_R_32F, uint64_t(k), uint64_t(m), k), "layout");
    SG_CUBLAS_TRY(cublasLtMatrixLayoutCreate(&lc_, CUDA_R_32F, uint64_t(n), uint64_t(m), n), "layout");
    cublasLtMatmulPreference_t pref = nullptr;
    SG_CUBLAS_TRY(cublasLtMatmulPreferenceCreate(&pref), "matmul preference");
    const uint64_t ws = s.workspace_bytes;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t hs =
        cublasLtMatmulAlgoGetHeuristic(s.lt, desc_, la_, lb_, lc_, lc_, pref, 1, &result, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (hs != CUBLAS_STATUS_SUCCESS) return kc::cublas_status(hs, "matmul algorithm");
    if (found == 0) return sg::Status(sg::StatusCode::kUnsupported, "cuBLASLt has no algorithm for these shapes");
    algo_ = result.algo;
    return sg::Status::Ok();
  }

  // o = act(x @ w + bias) on the context's stream.
  sg::Status run(kc::Context& ctx, const float* x, const float* w, float* o, int64_t activation) {
    kc::ContextImpl& s = kc::state(ctx);
    const float one = 1.0f, zero = 0.0f;
    SG_CUBLAS_TRY(cublasLtMatmul(s.lt, desc_, &one, w, la_, x, lb_, &zero, o, lc_, o, lc_, &algo_, s.workspace,
                                 s.workspace_bytes, s.stream),
                  "matmul");
    if (activation == sg::ops::attr::kActNone) return sg::Status::Ok();
    sg::kernels::TensorRef ref;
    ref.dtype = sg::DType::kF32;
    ref.rank = 2;
    ref.shape[0] = m_;
    ref.shape[1] = n_;
    ref.data = o;
    return kc::run_activation(ctx, activation, ref);
  }

 private:
  int64_t m_ = 0, k_ = 0, n_ = 0;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, lc_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
};

// Device memory released with the context.
struct DeviceBuffers {
  kc::Context* ctx = nullptr;
  std::vector<void*> held;
  ~DeviceBuffers() {
    for (void* p : held) ctx->release(p);
  }
  sg::Result<float*> get(size_t floats) {
    SG_ASSIGN_OR_RETURN(void* p, ctx->allocate(floats * sizeof(float)));
    held.push_back(p);
    return static_cast<float*>(p);
  }
};

int run(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: sg_gpu_mlp_bench MLP.sgraph WEIGHTS_DIR [--batch N] [--runs N]\n");
    return 1;
  }
  const std::string graph = argv[1], weights_dir = argv[2];
  int64_t batch = 4096;
  int runs = 50;
  for (int i = 3; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--batch" && i + 1 < argc) {
      batch = parse_count("--batch", argv[++i]);
    } else if (arg == "--runs" && i + 1 < argc) {
      runs = int(parse_count("--runs", argv[++i]));
    } else {
      std::fprintf(stderr, "error: unknown argument '%s'\n", arg.c_str());
      return 1;
    }
  }
  const std::string name = batch == 4096 ? kName
                                         : "MLP 784-512-512-10 b" + std::to_string(batch) +
                                               ": Session / cuBLASLt alone";
  if (const std::string why = no_device_reason(); !why.empty()) return skip(name, kGoal, why);

  // The weights, as the graph holds them.
  const char* names[6] = {"w1", "b1", "w2", "b2", "w3", "b3"};
  sg::Tensor host_w[6];
  for (int i = 0; i < 6; ++i) {
    auto t = sg::tools::read_npy(weights_dir + "/" + names[i] + ".npy");
    if (!t.ok()) return fail("weights", t.status());
    host_w[i] = std::move(t).value();
    const size_t rank = host_w[i].shape().size();
    if (host_w[i].dtype() != sg::DType::kF32 || rank != (i % 2 == 0 ? 2u : 1u)) {
      std::fprintf(stderr, "error: %s.npy: expected f32 of rank %d, got %s\n", names[i], i % 2 == 0 ? 2 : 1,
                   sg::tools::describe(host_w[i]).c_str());
      return 1;
    }
  }
  int64_t dims[4];  // 784, 512, 512, 10
  dims[0] = host_w[0].shape()[0];
  for (int l = 0; l < 3; ++l) {
    const sg::Tensor& w = host_w[2 * l];
    const sg::Tensor& b = host_w[2 * l + 1];
    if (w.shape()[0] != dims[l] || b.shape()[0] != w.shape()[1]) {
      std::fprintf(stderr, "error: %s.npy %s and %s.npy %s do not chain\n", names[2 * l],
                   sg::tools::describe(w).c_str(), names[2 * l + 1], sg::tools::describe(b).c_str());
      return 1;
    }
    dims[l + 1] = w.shape()[1];
  }

  // The Session.
  auto program = sg::Program::load_file(graph, sg::LoadOptions{});
  if (!program.ok()) return fail(graph, program.status());
  sg::SessionOptions options;
  auto gpu = sg::cuda_device(0);
  if (!gpu.ok()) {
    if (gpu.status().code() == sg::StatusCode::kUnsupported) return skip(name, kGoal, gpu.status().message());
    return fail("cuda_device", gpu.status());
  }
  options.device = *gpu;
  auto session = sg::Session::create(*program, (*program)->entries()[0].name, options);
  if (!session.ok()) {
    if (session.status().code() == sg::StatusCode::kUnsupported &&
        session.status().message().find("no CUDA device") != std::string::npos)
      return skip(name, kGoal, session.status().message());
    return fail("Session::create", session.status());
  }
  sg::Session& sess = **session;

  PinnedBuffer x, y_session, y_direct;
  const size_t x_floats = size_t(batch * dims[0]), y_floats = size_t(batch * dims[3]);
  for (auto [buf, n] : {std::pair{&x, x_floats}, std::pair{&y_session, y_floats}, std::pair{&y_direct, y_floats}})
    if (const cudaError_t e = buf->allocate(n * sizeof(float)); e != cudaSuccess) return fail_cuda("cudaMallocHost", e);
  Rng rng(1);
  for (size_t i = 0; i < x_floats; ++i) x.as<float>()[i] = rng.uniform(0.0f, 1.0f);
  const int64_t x_shape[2] = {batch, dims[0]};
  if (sg::Status s = sess.set_input(0, sg::Tensor::wrap(sg::DType::kF32, x_shape, x.data())); !s.ok())
    return fail("set_input", s);
  if (sg::Status s = sess.bind_output(0, y_session.data(), y_session.bytes()); !s.ok()) return fail("bind_output", s);

  // The direct chain, on a context of its own (its own stream, handle, workspace).
  kc::ContextOptions copts;
  auto ctx_or = kc::Context::create(copts);
  if (!ctx_or.ok()) return fail("cuda context", ctx_or.status());
  kc::Context& ctx = **ctx_or;
  kc::ContextImpl& cs = kc::state(ctx);
  DeviceBuffers mem{&ctx, {}};
  float* dw[6];
  for (int i = 0; i < 6; ++i) {
    auto p = mem.get(size_t(host_w[i].numel()));
    if (!p.ok()) return fail("device memory", p.status());
    dw[i] = *p;
    if (sg::Status s = ctx.upload(dw[i], host_w[i].data(), size_t(host_w[i].numel()) * sizeof(float));
        !s.ok())
      return fail("upload", s);
  }
  float* dact[4];
  for (int l = 0; l < 4; ++l) {
    auto p = mem.get(size_t(batch * dims[l]));
    if (!p.ok()) return fail("device memory", p.status());
    dact[l] = *p;
  }
  DirectLayer layers[3];
  for (int l = 0; l < 3; ++l)
    if (sg::Status s = layers[l].init(cs, batch, dims[l], dims[l + 1], dw[2 * l + 1]); !s.ok())
      return fail("layer " + std::to_string(l + 1), s);
  cudaEvent_t gemm_start = nullptr, gemm_end = nullptr;
  if (cudaError_t e = cudaEventCreate(&gemm_start); e != cudaSuccess) return fail_cuda("cudaEventCreate", e);
  if (cudaError_t e = cudaEventCreate(&gemm_end); e != cudaSuccess) return fail_cuda("cudaEventCreate", e);

  auto direct_run = [&](float* gemm_us) -> sg::Status {
    SG_CUDA_TRY(cudaMemcpyAsync(dact[0], x.data(), x_floats * sizeof(float), cudaMemcpyHostToDevice, cs.stream),
                "input copy");
    SG_CUDA_TRY(cudaEventRecord(gemm_start, cs.stream), "event");
    for (int l = 0; l < 3; ++l)
      SG_RETURN_IF_ERROR(layers[l].run(ctx, dact[l], dw[2 * l], dact[l + 1],
                                       l < 2 ? sg::ops::attr::kActRelu : sg::ops::attr::kActNone));
    SG_CUDA_TRY(cudaEventRecord(gemm_end, cs.stream), "event");
    SG_CUDA_TRY(cudaMemcpyAsync(y_direct.data(), dact[3], y_floats * sizeof(float), cudaMemcpyDeviceToHost, cs.stream),
                "output copy");
    SG_RETURN_IF_ERROR(ctx.synchronize());
    float ms = 0;
    SG_CUDA_TRY(cudaEventElapsedTime(&ms, gemm_start, gemm_end), "event time");
    *gemm_us = ms * 1000.0f;
    return sg::Status::Ok();
  };

  // Warm-up, and the check that both compute the same thing.
  float gemm_us = 0;
  for (int i = 0; i < 5; ++i) {
    if (sg::Status s = sess.run(); !s.ok()) return fail("Session::run", s);
    if (sg::Status s = direct_run(&gemm_us); !s.ok()) return fail("direct run", s);
  }
  double err = 0, scale = 0;
  for (size_t i = 0; i < y_floats; ++i) {
    err = std::max(err, double(std::fabs(y_session.as<float>()[i] - y_direct.as<float>()[i])));
    scale = std::max(scale, double(std::fabs(y_direct.as<float>()[i])));
  }
  std::printf("output check: max |session - direct| = %.3g, %.3g of the output's magnitude %.3g\n", err,
              scale > 0 ? err / scale : err, scale);
  if (!(err <= 1e-4 * scale)) {
    std::fprintf(stderr, "error: the Session's output differs from the direct cuBLASLt chain\n");
    return 1;
  }

  std::vector<double> t_session, t_direct, t_gemm;
  for (int r = 0; r < runs; ++r) {
    Clock::time_point t0 = Clock::now();
    if (sg::Status s = sess.run(); !s.ok()) return fail("Session::run", s);
    t_session.push_back(us_since(t0));
    t0 = Clock::now();
    if (sg::Status s = direct_run(&gemm_us); !s.ok()) return fail("direct run", s);
    t_direct.push_back(us_since(t0));
    t_gemm.push_back(gemm_us);
  }
  const double session_us = median(t_session), direct_us = median(t_direct), chain_us = median(t_gemm);
  double flops = 0;
  for (int l = 0; l < 3; ++l) flops += 2.0 * double(batch) * double(dims[l]) * double(dims[l + 1]);
  const double ratio = direct_us / session_us;
  std::printf("batch %lld, %d runs each, alternating; both copy x in and y out (pinned host memory)\n",
              static_cast<long long>(batch), runs);
  std::printf("Session (cuda) per run:            %10.1f us\n", session_us);
  std::printf("cuBLASLt + relu kernel per run:    %10.1f us\n", direct_us);
  std::printf("  of which the GEMM chain (events): %9.1f us (%.2f TFLOP/s f32)\n", chain_us,
              flops / (chain_us * 1e-6) / 1e12);
  std::printf("Session / cuBLASLt alone:          %10.1f %%\n", 100.0 * ratio);
  std::printf("row: %s | %.1f%% (Session %.0f us, cuBLASLt %.0f us per run; GEMMs %.0f us) | %s | %s\n",
              name.c_str(), 100.0 * ratio, session_us, direct_us, chain_us, kGoal, ratio >= 0.9 ? "yes" : "no");
  cudaEventDestroy(gemm_start);
  cudaEventDestroy(gemm_end);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return run(argc, argv); }
