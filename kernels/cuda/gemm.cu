// matmul, batched matmul and fully connected layers on cuBLASLt.
//
// Row-major C[M, N] = A[M, K] B[K, N] is column-major C^T = B^T A^T: cuBLASLt is
// given b as its first operand (N x K, ld N) and a as its second (K x M, ld K),
// and writes an N x M column-major matrix, which is C in row-major order. The
// bias of a fully connected layer (length N) is then a per-row vector, as the
// BIAS epilogue wants. Batches whose operands step uniformly run as one strided
// batched call (a stride of 0 broadcasts an operand); any other batch
// broadcasting issues one call per output matrix. Activations run after, by our
// own kernel, so that relu(NaN) stays NaN as in NumPy.
#include <algorithm>
#include <string>
#include <vector>

#include "cuda/common.cuh"
#include "cuda/kernels.h"

namespace sg::kernels::cuda {
namespace {

__global__ void fill_bias_kernel(const float* bias, float* o, int64_t rows, int64_t n) {
  const int64_t total = rows * n;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x)
    o[i] = bias != nullptr ? bias[i % n] : 0.0f;
}

struct Dims {
  int64_t m = 1, n = 1, k = 1;
  int64_t batch = 1;                // output matrices
  int64_t stride_a = 0, stride_b = 0;  // elements between batches, 0: broadcast
  bool uniform = true;              // one strided batched call covers it
  std::vector<int64_t> off_a, off_b;  // per output matrix, when not uniform
};

Status matmul_dims(const TensorRef& a, const TensorRef& b, const TensorRef& o, Dims& d) {
  if (a.rank < 1 || b.rank < 1) return internal_error("cuda matmul: rank 0 operand");
  d.k = a.shape[a.rank - 1];
  d.m = a.rank >= 2 ? a.shape[a.rank - 2] : 1;
  d.n = b.rank >= 2 ? b.shape[b.rank - 1] : 1;
  const int64_t kb = b.rank >= 2 ? b.shape[b.rank - 2] : b.shape[0];
  if (kb != d.k) return internal_error("cuda matmul: inner dims differ");
  const int ra = std::max(a.rank - 2, 0), rb = std::max(b.rank - 2, 0);
  const int rank = std::max(ra, rb);
  int64_t out_batch[kMaxRank] = {}, ba[kMaxRank] = {}, bb[kMaxRank] = {};
  for (int i = 0; i < rank; ++i) {
    ba[i] = i < rank - ra ? 1 : a.shape[i - (rank - ra)];
    bb[i] = i < rank - rb ? 1 : b.shape[i - (rank - rb)];
    out_batch[i] = std::max(ba[i], bb[i]);
    if ((ba[i] != out_batch[i] && ba[i] != 1) || (bb[i] != out_batch[i] && bb[i] != 1))
      return internal_error("cuda matmul: batch dims do not broadcast");
  }
  d.batch = 1;
  int64_t na = 1, nb = 1;
  for (int i = 0; i < rank; ++i) {
    d.batch *= out_batch[i];
    na *= ba[i];
    nb *= bb[i];
  }
  if (d.batch * d.m * d.n != o.numel()) return internal_error("cuda matmul: output size");
  const bool a_full = na == d.batch, b_full = nb == d.batch;
  d.uniform = (a_full || na == 1) && (b_full || nb == 1);
  d.stride_a = a_full && d.batch > 1 ? d.m * d.k : 0;
  d.stride_b = b_full && d.batch > 1 ? d.k * d.n : 0;
  if (!d.uniform) {
    d.off_a.resize(size_t(d.batch));
    d.off_b.resize(size_t(d.batch));
    for (int64_t t = 0; t < d.batch; ++t) {
      int64_t rest = t, oa = 0, ob = 0, sa = d.m * d.k, sb = d.k * d.n;
      for (int i = rank - 1; i >= 0; --i) {
        const int64_t c = rest % out_batch[i];
        rest /= out_batch[i];
        oa += (ba[i] == 1 ? 0 : c) * sa;
        ob += (bb[i] == 1 ? 0 : c) * sb;
        sa *= ba[i];
        sb *= bb[i];
      }
      d.off_a[size_t(t)] = oa;
      d.off_b[size_t(t)] = ob;
    }
  }
  return Status::Ok();
}

}  // namespace

struct Gemm::Plan {
  bool valid = false;
  int64_t m = 0, n = 0, k = 0, count = 0, stride_a = 0, stride_b = 0;
  bool bias = false, tf32 = false;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulAlgo_t algo{};

  void clear() {
    if (desc != nullptr) cublasLtMatmulDescDestroy(desc);
    for (cublasLtMatrixLayout_t l : {la, lb, lc})
      if (l != nullptr) cublasLtMatrixLayoutDestroy(l);
    desc = nullptr;
    la = lb = lc = nullptr;
    valid = false;
  }
};

Gemm::Gemm() : plan_(new Plan) {}
Gemm::~Gemm() {
  plan_->clear();
  delete plan_;
}

static Status make_layout(cublasLtMatrixLayout_t& l, int64_t rows, int64_t cols, int64_t ld, int64_t count,
                          int64_t stride) {
  SG_CUBLAS_TRY(cublasLtMatrixLayoutCreate(&l, CUDA_R_32F, uint64_t(rows), uint64_t(cols), ld), "matrix layout");
  if (count > 1) {
    const int32_t c = int32_t(count);
    SG_CUBLAS_TRY(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &c, sizeof c), "batch count");
    SG_CUBLAS_TRY(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                                   sizeof stride),
                  "batch stride");
  }
  return Status::Ok();
}

Status Gemm::run(Context& ctx, const TensorRef& a, const TensorRef& b, const TensorRef* bias, int64_t activation,
                 TensorRef& o) {
  ContextImpl& s = state(ctx);
  Dims d;
  SG_RETURN_IF_ERROR(matmul_dims(a, b, o, d));
  if (o.numel() == 0) return Status::Ok();
  if (d.k == 0) {
    fill_bias_kernel<<<grid_for(o.numel()), kBlock, 0, s.stream>>>(bias != nullptr ? bias->as<const float>() : nullptr,
                                                                     o.as<float>(), o.numel() / d.n, d.n);
    SG_RETURN_IF_ERROR(launched("matmul"));
    return run_activation(ctx, activation, o);
  }
  const int64_t count = d.uniform ? d.batch : 1;
  const bool tf32 = s.options.allow_tf32;
  Plan& p = *plan_;
  if (!p.valid || p.m != d.m || p.n != d.n || p.k != d.k || p.count != count || p.stride_a != d.stride_a ||
      p.stride_b != d.stride_b || p.bias != (bias != nullptr) || p.tf32 != tf32) {
    p.clear();
    p.m = d.m, p.n = d.n, p.k = d.k, p.count = count, p.stride_a = d.stride_a, p.stride_b = d.stride_b;
    p.bias = bias != nullptr;
    p.tf32 = tf32;
    SG_CUBLAS_TRY(cublasLtMatmulDescCreate(&p.desc, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                                           CUDA_R_32F),
                  "matmul descriptor");
    if (bias != nullptr) {
      const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
      SG_CUBLAS_TRY(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi), "epilogue");
    }
    // cuBLASLt's A is our b (N x K), its B our a (K x M), its C/D N x M.
    SG_RETURN_IF_ERROR(make_layout(p.la, d.n, d.k, d.n, count, d.stride_b));
    SG_RETURN_IF_ERROR(make_layout(p.lb, d.k, d.m, d.k, count, d.stride_a));
    SG_RETURN_IF_ERROR(make_layout(p.lc, d.n, d.m, d.n, count, d.m * d.n));
    cublasLtMatmulPreference_t pref = nullptr;
    SG_CUBLAS_TRY(cublasLtMatmulPreferenceCreate(&pref), "matmul preference");
    const uint64_t ws = s.workspace_bytes;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(s.lt, p.desc, p.la, p.lb, p.lc, p.lc, pref, 1, &result,
                                                             &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (hs != CUBLAS_STATUS_SUCCESS || found == 0) {
      p.clear();
      return hs != CUBLAS_STATUS_SUCCESS ? cublas_status(hs, "matmul algorithm")
                                         : unsupported("matmul: cuBLASLt has no algorithm for these shapes");
    }
    p.algo = result.algo;
    p.valid = true;
  }
  if (bias != nullptr) {
    const void* ptr = bias->data;
    SG_CUBLAS_TRY(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &ptr, sizeof ptr),
                  "bias pointer");
  }
  const float one = 1.0f, zero = 0.0f;
  const float* pa = a.as<const float>();
  const float* pb = b.as<const float>();
  float* po = o.as<float>();
  const int64_t calls = d.uniform ? 1 : d.batch;
  for (int64_t t = 0; t < calls; ++t) {
    const float* ta = pa + (d.uniform ? 0 : d.off_a[size_t(t)]);
    const float* tb = pb + (d.uniform ? 0 : d.off_b[size_t(t)]);
    float* to = po + (d.uniform ? 0 : t * d.m * d.n);
    SG_CUBLAS_TRY(cublasLtMatmul(s.lt, p.desc, &one, tb, p.la, ta, p.lb, &zero, to, p.lc, to, p.lc, &p.algo,
                                 s.workspace, s.workspace_bytes, s.stream),
                  "matmul");
  }
  return run_activation(ctx, activation, o);
}

}  // namespace sg::kernels::cuda
