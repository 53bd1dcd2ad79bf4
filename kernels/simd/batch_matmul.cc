// matmul of two f32 tensors when the right operand is not a constant rank-2
// matrix (XNNPACK has no batch matmul): NumPy's semantics (1-D promotion, batch
// broadcasting) on our own register-blocked GEMM (simd.h). A tile of MR rows x NR
// columns of C lives in vector registers while k runs, reading one row of the B
// panel and MR scalars of A per step; tasks (batch x row block x column block) go
// to the thread pool.

#include <algorithm>
#include <cstring>

#include "simd/simd.h"
#include "simd/simd_kernels.h"

namespace sg::kernels::xnn {
namespace {

using namespace simd;

// C[i, j] = sum_p A[i, p] * B[p, j] for one MR x (NV vectors) tile.
template <class V, int MR, int NV>
SG_SIMD_INLINE void tile(const float* a, size_t lda, const float* b, size_t ldb, float* c, size_t ldc, size_t k) {
  V acc[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = V{};
  for (size_t p = 0; p < k; ++p) {
    V bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = load<V>(b + p * ldb + size_t(v * kLanes<V>));
    for (int r = 0; r < MR; ++r) {
      const V av = splat<V>(a[size_t(r) * lda + p]);
      for (int v = 0; v < NV; ++v) acc[r][v] += av * bv[v];
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) store<V>(c + size_t(r) * ldc + size_t(v * kLanes<V>), acc[r][v]);
}

struct Block {
  const float* a;
  const float* b;
  float* c;
  size_t lda, ldb, ldc, k;
  size_t rows, cols;  // of this block of C
};

// Fewer than NR columns: one row at a time, accumulators on the stack.
template <int NR>
SG_SIMD_INLINE void column_tail(const Block& t, size_t j0) {
  const size_t nb = t.cols - j0;
  for (size_t i = 0; i < t.rows; ++i) {
    float acc[NR] = {};
    const float* arow = t.a + i * t.lda;
    for (size_t p = 0; p < t.k; ++p) {
      const float av = arow[p];
      const float* brow = t.b + p * t.ldb + j0;
      for (size_t j = 0; j < nb; ++j) acc[j] += av * brow[j];
    }
    std::memcpy(t.c + i * t.ldc + j0, acc, nb * sizeof(float));
  }
}

template <class V, int MR, int NV>
SG_SIMD_INLINE void gemm_block(const Block& t) {
  constexpr size_t kNR = size_t(NV * kLanes<V>);
  size_t j = 0;
  for (; j + kNR <= t.cols; j += kNR) {
    size_t i = 0;
    for (; i + MR <= t.rows; i += MR) tile<V, MR, NV>(t.a + i * t.lda, t.lda, t.b + j, t.ldb, t.c + i * t.ldc + j, t.ldc, t.k);
    for (; i < t.rows; ++i) tile<V, 1, NV>(t.a + i * t.lda, t.lda, t.b + j, t.ldb, t.c + i * t.ldc + j, t.ldc, t.k);
  }
  if (j < t.cols) column_tail<kNR>(t, j);
}

// Register budgets: AVX-512 has 32 vector registers (16 accumulators), AVX2 and
// SSE 16 (12 and 8).
#ifdef SG_SIMD_X86
SG_TARGET_AVX512 void gemm_avx512(const Block& t) { gemm_block<V16, 8, 2>(t); }
SG_TARGET_AVX2 void gemm_avx2(const Block& t) { gemm_block<V8, 6, 2>(t); }
#endif
void gemm_baseline(const Block& t) { gemm_block<V4, 4, 2>(t); }

// Column blocks are multiples of every ISA's NR (32 at most) so that only the last
// block of a row has a tail; row blocks keep a task's A rows in L1/L2.
constexpr size_t kColumnBlock = 256;
constexpr size_t kRowBlock = 64;

// The whole matmul as batch x row blocks x column blocks tasks.
struct Plan {
  Isa isa;
  const float* a;
  const float* b;
  float* c;
  size_t m, k, n;
  size_t row_blocks, col_blocks;
  // Batch: the output's batch dims (row-major) and each operand's matrix stride
  // per batch dim (0 where it broadcasts).
  int batch_rank;
  size_t batch_dims[kMaxRank];
  size_t a_strides[kMaxRank], b_strides[kMaxRank];
};

void run_task(void* arg, size_t index) {
  const Plan& p = *static_cast<const Plan*>(arg);
  const size_t cb = index % p.col_blocks, rb = (index / p.col_blocks) % p.row_blocks;
  size_t batch = index / (p.col_blocks * p.row_blocks);
  size_t a_mat = 0, b_mat = 0;
  for (int d = p.batch_rank - 1; d >= 0; --d) {
    const size_t i = batch % p.batch_dims[d];
    batch /= p.batch_dims[d];
    a_mat += i * p.a_strides[d];
    b_mat += i * p.b_strides[d];
  }
  const size_t i0 = rb * kRowBlock, j0 = cb * kColumnBlock;
  const size_t c_mat = index / (p.col_blocks * p.row_blocks);
  Block t{p.a + a_mat * p.m * p.k + i0 * p.k,
          p.b + b_mat * p.k * p.n + j0,
          p.c + c_mat * p.m * p.n + i0 * p.n + j0,
          p.k, p.n, p.n, p.k,
          std::min(kRowBlock, p.m - i0), std::min(kColumnBlock, p.n - j0)};
  switch (p.isa) {
#ifdef SG_SIMD_X86
    case Isa::kAvx512: return gemm_avx512(t);
    case Isa::kAvx2: return gemm_avx2(t);
#endif
    default: return gemm_baseline(t);
  }
}

class BatchMatMulKernel final : public PreparedKernel {
 public:
  BatchMatMulKernel() : isa_(best_isa()) {}

  Status run(const KernelContext& ctx, std::span<const TensorRef> in, std::span<TensorRef> out) override {
    if (in.size() != 2 || out.size() != 1) return internal_error("matmul: wrong operand count");
    const TensorRef &a = in[0], &b = in[1], &o = out[0];
    Plan p{};
    // Anything this plan does not recognize goes to the reference kernel, whose
    // checks produce the error message.
    if (!is_f32(a) || !is_f32(b) || !is_f32(o) || !make_plan(a, b, o, p)) return run_reference(ops::OpId::MatMul, {}, ctx, in, out);
    if (o.numel() == 0) return Status::Ok();
    if (p.k == 0) {
      std::memset(o.data, 0, o.nbytes());
      return Status::Ok();
    }
    size_t batches = 1;
    for (int d = 0; d < p.batch_rank; ++d) batches *= p.batch_dims[d];
    parallelize(ctx, run_task, &p, batches * p.row_blocks * p.col_blocks);
    return Status::Ok();
  }
  const char* name() const override { return "sg:batch_matmul_f32"; }

 private:
  bool make_plan(const TensorRef& a, const TensorRef& b, const TensorRef& o, Plan& p) const {
    if (a.rank < 1 || b.rank < 1) return false;
    const int ar = a.rank == 1 ? 1 : 2, br = b.rank == 1 ? 1 : 2;
    const int64_t m = a.rank == 1 ? 1 : a.shape[a.rank - 2], k = a.shape[a.rank - 1];
    const int64_t n = b.rank == 1 ? 1 : b.shape[b.rank - 1];
    if (b.shape[b.rank - br] != k) return false;
    const int out_matrix_rank = (a.rank == 1 ? 0 : 1) + (b.rank == 1 ? 0 : 1);
    const int batch_rank = o.rank - out_matrix_rank;
    const int a_batch = a.rank - ar, b_batch = b.rank - br;
    if (batch_rank < 0 || batch_rank < a_batch || batch_rank < b_batch) return false;
    // The output's matrix dims.
    if ((a.rank != 1 && o.shape[batch_rank] != m) || (b.rank != 1 && o.shape[o.rank - 1] != n)) return false;
    p.isa = isa_;
    p.a = a.as<const float>();
    p.b = b.as<const float>();
    p.c = o.as<float>();
    p.m = size_t(m), p.k = size_t(k), p.n = size_t(n);
    p.batch_rank = batch_rank;
    size_t a_stride = 1, b_stride = 1;
    for (int d = batch_rank - 1; d >= 0; --d) {
      const int da = d - (batch_rank - a_batch), db = d - (batch_rank - b_batch);
      const int64_t od = o.shape[d];
      const int64_t ad = da >= 0 ? a.shape[da] : 1, bd = db >= 0 ? b.shape[db] : 1;
      if ((ad != od && ad != 1) || (bd != od && bd != 1)) return false;
      p.batch_dims[d] = size_t(od);
      p.a_strides[d] = ad == 1 ? 0 : a_stride;
      p.b_strides[d] = bd == 1 ? 0 : b_stride;
      a_stride *= size_t(ad);
      b_stride *= size_t(bd);
    }
    // B shared by every batch: the batch folds into the rows of one GEMM (A and C
    // are contiguous), which gives the row blocks more to share B with.
    if (b_batch == 0 && a_batch == batch_rank) {
      p.m *= a_stride;
      p.batch_rank = 0;
    }
    p.row_blocks = (p.m + kRowBlock - 1) / kRowBlock;
    p.col_blocks = (p.n + kColumnBlock - 1) / kColumnBlock;
    return true;
  }

  Isa isa_;
};

}  // namespace

std::unique_ptr<PreparedKernel> make_batch_matmul(std::span<const InputInfo> in) {
  if (in.size() != 2 || !is_f32(in[0]) || !is_f32(in[1]) || in[0].rank < 1 || in[1].rank < 1) return nullptr;
  return std::make_unique<BatchMatMulKernel>();
}

}  // namespace sg::kernels::xnn
