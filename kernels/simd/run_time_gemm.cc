// matmul and fully_connected whose weights are a run-time input (a rank-2 f32
// operand that is not a constant of the graph): the weights of a model that takes
// them as arguments, updated at run time, or shared by several weight sets; and
// batched matmuls [..., M, K] @ [..., K, N] of run-time operands with the same
// batch dims (attention's products), one matrix after another.
//
// Each run prepares the weights for the same micro-kernels that run constant
// weights (dense_gemm.h), in buffers the kernel keeps from one run to the next:
//
//  - More than kMaxDirectRows rows of A: each panel of NR columns is packed into
//    the kernel's PackedPanels by the task that multiplies it, just before it
//    does, so the panel (K x NR floats: 50 KiB for K = 784 on AVX2) is still in
//    L2 when the micro-kernels stream it, and the copy costs little beside the
//    product. Tasks own whole panels, split as run_packed splits constant ones;
//    where rows are split too (fewer panels than threads), the panels are packed
//    first, then multiplied.
//  - Up to kMaxDirectRows rows (batch 1): packing would read and write every
//    weight once more for a product that reads each once, so the rows are
//    multiplied straight from the row-major weights: four weight rows at a time
//    stream into the output rows, which stay in L1 (columns split over threads).
//
// Both paths scan the weights' magnitudes as they read them. As for constant
// weights (xnn_common.h's OverflowBound), an input that could overflow, or NaN or
// infinity in the input, the weights or the bias, gives the reference kernel's
// result: the fast result is discarded and the reference runs (the output of a
// matmul never shares a buffer with an input). The bound used here,
// max|x| * K * max|w| + max|b|, is looser than the per-column one of constant
// weights, so the reference runs for values within ~K of the float range only.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "simd/dense_gemm.h"
#include "simd/simd.h"
#include "simd/simd_kernels.h"

namespace sg::kernels::xnn {
namespace {

using namespace simd;

// Rows of A up to which the product runs straight from the unpacked weights.
constexpr size_t kMaxDirectRows = 4;
// The largest weight the panels are allocated for at prepare time (the declared
// shape is the graph's word, not data).
constexpr int64_t kMaxRunTimeWeightBytes = int64_t(256) << 20;

constexpr int32_t kMagnitude = 0x7fffffff;

// ---- packing ---------------------------------------------------------------------

// Panel `q` of w [k][n] into `dst` [k][NR] (zero columns past n); returns the largest
// magnitude's bits (NaN and infinity sort above every finite value).
template <class V, size_t NR>
SG_SIMD_INLINE int32_t pack_panel(const float* w, size_t k, size_t n, size_t q, float* dst) {
  using I = IntOf<V>;
  constexpr size_t L = size_t(kLanes<V>);
  static_assert(NR % L == 0);
  const size_t c0 = q * NR, cols = std::min(NR, n - c0);
  I m = I{};
  if (cols == NR) {
    for (size_t r = 0; r < k; ++r) {
      const float* src = w + r * n + c0;
      float* to = dst + r * NR;
#pragma GCC unroll 4
      for (size_t v = 0; v < NR; v += L) {
        const V x = load<V>(src + v);
        const I b = bit_cast<I>(x) & kMagnitude;
        m = b > m ? b : m;
        store<V>(to + v, x);
      }
    }
  } else {
    int32_t s = 0;
    for (size_t r = 0; r < k; ++r) {
      const float* src = w + r * n + c0;
      float* to = dst + r * NR;
      for (size_t c = 0; c < cols; ++c) {
        to[c] = src[c];
        s = std::max(s, bit_cast<int32_t>(src[c]) & kMagnitude);
      }
      std::fill(to + cols, to + NR, 0.0f);
    }
    return s;
  }
  int32_t r = 0;
  for (int l = 0; l < kLanes<V>; ++l) r = std::max(r, int32_t(m[l]));
  return r;
}

// ---- the direct product of a few rows ----------------------------------------------

// c[r][j] = sum_p a[r][p] * w[p][j] (+ bias[j], relu) for r < MR, j in [j0, j1):
// the output rows (in L1) take four weight rows per pass, each weight vector read
// once for all MR rows. Returns the weights' largest magnitude bits over the
// columns read.
template <class V, int MR>
SG_SIMD_INLINE int32_t direct_rows(const float* a, size_t lda, const float* w, size_t k, size_t n, float* c,
                                   size_t ldc, size_t j0, size_t j1, const float* bias, bool relu) {
  using I = IntOf<V>;
  constexpr size_t L = size_t(kLanes<V>);
  I mv = I{};
  int32_t ms = 0;
  for (int r = 0; r < MR; ++r) std::fill(c + size_t(r) * ldc + j0, c + size_t(r) * ldc + j1, 0.0f);
  size_t p = 0;
  for (; p + 4 <= k; p += 4) {
    const float* w0 = w + p * n;
    const float *w1 = w0 + n, *w2 = w1 + n, *w3 = w2 + n;
    V a0[MR], a1[MR], a2[MR], a3[MR];
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const float* ar = a + size_t(r) * lda + p;
      a0[r] = splat<V>(ar[0]);
      a1[r] = splat<V>(ar[1]);
      a2[r] = splat<V>(ar[2]);
      a3[r] = splat<V>(ar[3]);
    }
    size_t j = j0;
    for (; j + L <= j1; j += L) {
      const V x0 = load<V>(w0 + j), x1 = load<V>(w1 + j), x2 = load<V>(w2 + j), x3 = load<V>(w3 + j);
      const I b01 = (bit_cast<I>(x0) & kMagnitude) > (bit_cast<I>(x1) & kMagnitude) ? (bit_cast<I>(x0) & kMagnitude)
                                                                                     : (bit_cast<I>(x1) & kMagnitude);
      const I b23 = (bit_cast<I>(x2) & kMagnitude) > (bit_cast<I>(x3) & kMagnitude) ? (bit_cast<I>(x2) & kMagnitude)
                                                                                     : (bit_cast<I>(x3) & kMagnitude);
      const I b = b01 > b23 ? b01 : b23;
      mv = b > mv ? b : mv;
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        float* cr = c + size_t(r) * ldc + j;
        store<V>(cr, load<V>(cr) + (a0[r] * x0 + a1[r] * x1) + (a2[r] * x2 + a3[r] * x3));
      }
    }
    for (; j < j1; ++j) {
      for (const float* q : {w0, w1, w2, w3}) ms = std::max(ms, bit_cast<int32_t>(q[j]) & kMagnitude);
      for (int r = 0; r < MR; ++r) {
        const float* ar = a + size_t(r) * lda + p;
        c[size_t(r) * ldc + j] += (ar[0] * w0[j] + ar[1] * w1[j]) + (ar[2] * w2[j] + ar[3] * w3[j]);
      }
    }
  }
  for (; p < k; ++p) {
    const float* w0 = w + p * n;
    for (size_t j = j0; j < j1; ++j) {
      ms = std::max(ms, bit_cast<int32_t>(w0[j]) & kMagnitude);
      for (int r = 0; r < MR; ++r) c[size_t(r) * ldc + j] += a[size_t(r) * lda + p] * w0[j];
    }
  }
  for (int r = 0; r < MR; ++r) {
    float* cr = c + size_t(r) * ldc;
    size_t j = j0;
    for (; j + L <= j1; j += L) {
      V v = load<V>(cr + j);
      if (bias != nullptr) v += load<V>(bias + j);
      // x < 0 ? 0 : x: NaN stays NaN (NumPy's rule).
      if (relu) v = v < splat<V>(0.0f) ? splat<V>(0.0f) : v;
      store<V>(cr + j, v);
    }
    for (; j < j1; ++j) {
      float v = cr[j] + (bias != nullptr ? bias[j] : 0.0f);
      cr[j] = relu && v < 0.0f ? 0.0f : v;
    }
  }
  for (int l = 0; l < kLanes<V>; ++l) ms = std::max(ms, int32_t(mv[l]));
  return ms;
}

template <class V>
SG_SIMD_INLINE int32_t direct(size_t m, const float* a, size_t lda, const float* w, size_t k, size_t n, float* c,
                              size_t ldc, size_t j0, size_t j1, const float* bias, bool relu) {
  static_assert(kMaxDirectRows == 4);
  switch (m) {
    case 1: return direct_rows<V, 1>(a, lda, w, k, n, c, ldc, j0, j1, bias, relu);
    case 2: return direct_rows<V, 2>(a, lda, w, k, n, c, ldc, j0, j1, bias, relu);
    case 3: return direct_rows<V, 3>(a, lda, w, k, n, c, ldc, j0, j1, bias, relu);
    default: return direct_rows<V, 4>(a, lda, w, k, n, c, ldc, j0, j1, bias, relu);
  }
}

using PackFn = int32_t (*)(const float* w, size_t k, size_t n, size_t q, float* dst);
using DirectFn = int32_t (*)(size_t m, const float* a, size_t lda, const float* w, size_t k, size_t n, float* c,
                             size_t ldc, size_t j0, size_t j1, const float* bias, bool relu);

#ifdef SG_SIMD_X86
SG_TARGET_AVX512 int32_t pack_avx512(const float* w, size_t k, size_t n, size_t q, float* dst) {
  return pack_panel<V16, kAvx512NR>(w, k, n, q, dst);
}
SG_TARGET_AVX2 int32_t pack_avx2(const float* w, size_t k, size_t n, size_t q, float* dst) {
  return pack_panel<V8, kAvx2NR>(w, k, n, q, dst);
}
SG_TARGET_AVX512 int32_t direct_avx512(size_t m, const float* a, size_t lda, const float* w, size_t k, size_t n,
                                       float* c, size_t ldc, size_t j0, size_t j1, const float* bias, bool relu) {
  return direct<V16>(m, a, lda, w, k, n, c, ldc, j0, j1, bias, relu);
}
SG_TARGET_AVX2 int32_t direct_avx2(size_t m, const float* a, size_t lda, const float* w, size_t k, size_t n,
                                   float* c, size_t ldc, size_t j0, size_t j1, const float* bias, bool relu) {
  return direct<V8>(m, a, lda, w, k, n, c, ldc, j0, j1, bias, relu);
}
#endif

// ---- tasks -----------------------------------------------------------------------

// Task i packs and multiplies panels [i * panel_tile, ...) for rows [row_begin,
// row_end); with `pack` false the panels are packed already.
struct PanelTasks {
  const GemmArgs* args;
  GemmFn fn;
  const KernelContext* ctx;  // for interrupted()
  PackFn pack_fn;
  const float* w;  // row-major [k][n]
  float* packed;
  int32_t* panel_bits;  // per panel
  size_t m, k, n, nr, panels, row_tile, panel_tile, panel_parts;
  bool pack;
};

void run_panel_task(void* context, size_t i) {
  const PanelTasks& t = *static_cast<const PanelTasks*>(context);
  const size_t row = i / t.panel_parts * t.row_tile, first = i % t.panel_parts * t.panel_tile;
  const size_t row_end = std::min(t.m, row + t.row_tile), last = std::min(t.panels, first + t.panel_tile);
  for (size_t q = first; q < last; ++q) {
    if (t.ctx->interrupted()) return;
    if (t.pack) t.panel_bits[q] = t.pack_fn(t.w, t.k, t.n, q, t.packed + q * t.k * t.nr);
    run_rows_interruptibly(*t.ctx, t.fn, *t.args, row, row_end, q, q + 1);
  }
}

void pack_task(void* context, size_t q) {
  const PanelTasks& t = *static_cast<const PanelTasks*>(context);
  t.panel_bits[q] = t.pack_fn(t.w, t.k, t.n, q, t.packed + q * t.k * t.nr);
}

// Task i: columns [i * cols, ...) of every row, straight from the weights.
struct DirectTasks {
  DirectFn fn;
  const float* a;
  const float* w;
  float* c;
  const float* bias;
  int32_t* bits;  // per task
  size_t m, lda, k, n, ldc, cols;
  bool relu;
};

void run_direct_task(void* context, size_t i) {
  const DirectTasks& t = *static_cast<const DirectTasks*>(context);
  const size_t j0 = i * t.cols, j1 = std::min(t.n, j0 + t.cols);
  t.bits[i] = t.fn(t.m, t.a, t.lda, t.w, t.k, t.n, t.c, t.ldc, j0, j1, t.bias, t.relu);
}

float float_of_bits(int32_t bits) {
  return bits >= 0x7f800000 ? std::numeric_limits<float>::infinity() : bit_cast<float>(bits);
}

class RunTimeGemmKernel final : public PreparedKernel {
 public:
  // `batch_rank` > 0: a batched matmul whose right operand has that many batch
  // dims; `fallback` runs the operands it does not take (broadcasting).
  RunTimeGemmKernel(PackedPanels panels, PackFn pack, DirectFn direct, ops::OpId op, ops::Attrs attrs, int64_t k,
                    int64_t n, bool relu, bool tanh, std::string name, int batch_rank = 0,
                    std::unique_ptr<PreparedKernel> fallback = nullptr)
      : panels_(std::move(panels)), pack_(pack), direct_(direct), op_(op), attrs_(std::move(attrs)), k_(k), n_(n),
        relu_(relu), tanh_(tanh), name_(std::move(name)), isa_(best_isa()), batch_rank_(batch_rank),
        fallback_(std::move(fallback)) {
    const size_t count = (size_t(n_) + panels_.isa.nr - 1) / panels_.isa.nr;
    panel_bits_.assign(count, 0);
  }

  Status run(const KernelContext& ctx, std::span<const TensorRef> in, std::span<TensorRef> out) override {
    if (batch_rank_ > 0) return run_batched(ctx, in, out);
    if (dynamic_k_ && in.size() >= 2 && in[1].rank == 2 && in[1].shape[0] != k_) {
      // K known only now (a weight gradient's x^T @ g over a batch of N): panels for it.
      const int64_t k = in[1].shape[0];
      std::optional<PackedPanels> panels;
      if (k > 0 && k <= kMaxRunTimeWeightBytes / int64_t(sizeof(float)) / n_)
        panels = allocate_panels(panel_isa_, size_t(k), size_t(n_), false);
      if (!panels) return run_reference(op_, attrs_, ctx, in, out);
      panels_ = std::move(*panels);
      k_ = k;
    }
    SG_RETURN_IF_ERROR(check_dense_operands(op_, k_, n_, in, out));
    const TensorRef &a = in[0], &w = in[1], &o = out[0];
    if (!is_f32(w) || w.rank != 2 || w.shape[0] != k_ || w.shape[1] != n_)
      return internal_error(std::string(op_ == ops::OpId::FullyConnected ? "fully_connected" : "matmul") +
                            ": weights " + describe_shape(w) + " for f32[" + std::to_string(k_) + ", " +
                            std::to_string(n_) + "]");
    const size_t m = size_t(a.numel() / k_), n = size_t(n_);
    if (m == 0) return Status::Ok();
    const float* bias = op_ == ops::OpId::FullyConnected ? in[2].as<const float>() : nullptr;
    const float max_x = max_magnitude(a.as<const float>(), size_t(a.numel()), isa_);
    const float max_b = bias != nullptr ? max_magnitude(bias, n, isa_) : 0.0f;
    // A non-finite input or bias: the reference, without the product.
    if (!std::isfinite(max_x) || !std::isfinite(max_b)) return run_reference(op_, attrs_, ctx, in, out);
    const int32_t bits = product(ctx, a.as<const float>(), w.as<const float>(), o.as<float>(), m, bias);
    if (ctx.interrupted()) return interrupted_status();  // before the fallback looks at a half-made product
    if (!safe(bits, max_x, max_b)) return run_reference(op_, attrs_, ctx, in, out);
    if (tanh_) tanh_f32(ctx, isa_, o.as<float>(), o.as<float>(), m * n);
    return Status::Ok();
  }
  const char* name() const override { return name_.c_str(); }
  size_t memory_bytes() const override { return panels_.bytes(); }

 private:
  size_t split_threads(const KernelContext& ctx, size_t m) const {
    const size_t threads = threads_of(ctx);
    const size_t flops = 2 * m * size_t(k_) * size_t(n_);
    return threads > 1 && flops >= (ctx.team != nullptr ? kMinTeamGemmFlops : kMinParallelGemmFlops) ? threads : 1;
  }

  bool safe(int32_t bits, float max_x, float max_b) const {
    OverflowBound bound;
    bound.weights = double(k_) * double(float_of_bits(bits));
    bound.bias = max_b;
    return bound.safe(max_x);
  }

  int32_t product(const KernelContext& ctx, const float* a, const float* w, float* o, size_t m, const float* bias) {
    return m <= kMaxDirectRows ? run_direct(ctx, a, w, o, m, bias) : run_packed_panels(ctx, a, w, o, m, bias);
  }

  // [..., M, K] @ [..., K, N] with the same batch dims: one product per matrix.
  // Other operands (broadcast batch dims) run the batch matmul.
  Status run_batched(const KernelContext& ctx, std::span<const TensorRef> in, std::span<TensorRef> out) {
    if (in.size() != 2 || out.size() != 1) return internal_error("matmul: wrong operand count");
    const TensorRef &a = in[0], &w = in[1], &o = out[0];
    const int r = batch_rank_ + 2;
    bool same = is_f32(a) && is_f32(w) && is_f32(o) && a.rank == r && w.rank == r && o.rank == r &&
                a.shape[r - 1] == k_ && w.shape[r - 2] == k_ && w.shape[r - 1] == n_ &&
                o.shape[r - 2] == a.shape[r - 2] && o.shape[r - 1] == n_;
    size_t batches = 1;
    for (int d = 0; d < batch_rank_ && same; ++d) {
      same = a.shape[d] == w.shape[d] && o.shape[d] == w.shape[d];
      batches *= size_t(w.shape[d]);
    }
    if (!same) return fallback_->run(ctx, in, out);
    const size_t m = size_t(a.shape[r - 2]), k = size_t(k_), n = size_t(n_);
    if (m == 0 || batches == 0) return Status::Ok();
    const float max_x = max_magnitude(a.as<const float>(), size_t(a.numel()), isa_);
    if (!std::isfinite(max_x)) return run_reference(op_, attrs_, ctx, in, out);
    int32_t bits = 0;
    for (size_t b = 0; b < batches; ++b) {
      if (ctx.interrupted()) return interrupted_status();
      bits = std::max(bits, product(ctx, a.as<const float>() + b * m * k, w.as<const float>() + b * k * n,
                                    o.as<float>() + b * m * n, m, nullptr));
    }
    if (ctx.interrupted()) return interrupted_status();
    if (!safe(bits, max_x, 0.0f)) return run_reference(op_, attrs_, ctx, in, out);
    return Status::Ok();
  }

  int32_t run_direct(const KernelContext& ctx, const float* a, const float* w, float* o, size_t m,
                     const float* bias) {
    const size_t n = size_t(n_), threads = split_threads(ctx, m);
    // Columns per task: whole panels' worth, so that tasks start on a vector.
    const size_t unit = panels_.isa.nr;
    const size_t cols = threads == 1 ? n : ((n + threads - 1) / threads + unit - 1) / unit * unit;
    const size_t tasks = (n + cols - 1) / cols;
    if (direct_bits_.size() < tasks) direct_bits_.assign(tasks, 0);
    DirectTasks t{direct_, a, w, o, bias, direct_bits_.data(), m, size_t(k_), size_t(k_), n, n, cols, relu_};
    if (tasks == 1) run_direct_task(&t, 0);
    else parallelize(ctx, run_direct_task, &t, tasks);
    return *std::max_element(direct_bits_.begin(), direct_bits_.begin() + ptrdiff_t(tasks));
  }

  int32_t run_packed_panels(const KernelContext& ctx, const float* a, const float* w, float* o, size_t m,
                            const float* bias) {
    const PackedPanels& p = panels_;
    const size_t nr = p.isa.nr, panels = panel_bits_.size(), threads = split_threads(ctx, m);
    const GemmArgs args{a, p.k, p.w.get(), bias, o, p.n, p.n, p.k, p.kc, relu_};
    PanelTasks t{&args, p.isa.fn, &ctx, pack_, w, p.w.get(), panel_bits_.data(), m, p.k, p.n, nr, panels, m, panels, 1,
                 true};
    if (threads == 1) {
      run_panel_task(&t, 0);
    } else {
      // As run_packed: whole panels per task, rows split too where there are
      // fewer panels than threads (then every panel is packed first).
      t.panel_tile = (panels + threads - 1) / threads;
      t.panel_parts = (panels + t.panel_tile - 1) / t.panel_tile;
      const size_t row_parts = (threads + t.panel_parts - 1) / t.panel_parts;
      t.row_tile = ((m + row_parts - 1) / row_parts + p.isa.mr - 1) / p.isa.mr * p.isa.mr;
      const size_t tasks = (m + t.row_tile - 1) / t.row_tile * t.panel_parts;
      if (tasks > t.panel_parts) {
        if (panels == 1) pack_task(&t, 0);
        else parallelize(ctx, pack_task, &t, panels);
        t.pack = false;
      }
      parallelize(ctx, run_panel_task, &t, tasks);
    }
    return *std::max_element(panel_bits_.begin(), panel_bits_.end());
  }

  PackedPanels panels_;
  PackFn pack_;
  DirectFn direct_;
  ops::OpId op_;  // matmul or fully_connected, for the reference kernel
  ops::Attrs attrs_;
  int64_t k_, n_;
  bool relu_, tanh_;
  std::string name_;
  Isa isa_;
  std::vector<int32_t> panel_bits_, direct_bits_;
  int batch_rank_;
  std::unique_ptr<PreparedKernel> fallback_;

 public:
  bool dynamic_k_ = false;  // K is a symbolic dim: panels are sized at the run
  Isa panel_isa_ = Isa::kBaseline;
};

}  // namespace

std::unique_ptr<PreparedKernel> make_run_time_gemm(std::span<const InputInfo> in, int64_t activation) {
#ifdef SG_SIMD_X86
  if (in.size() != 2 && in.size() != 3) return nullptr;
  const InputInfo &a = in[0], &w = in[1];
  if (!is_f32(a) || !is_f32(w) || a.rank < 1 || w.rank < 2 || w.constant != nullptr) return nullptr;
  // A batch of right operands: a batched matmul of the same rank on both sides.
  const int batch_rank = w.rank - 2;
  if (batch_rank > 0) {
    if (in.size() != 2 || a.rank != w.rank) return nullptr;
    for (int d = 0; d < batch_rank; ++d)
      if (w.shape[d] <= 0 || (a.shape[d] >= 0 && a.shape[d] != w.shape[d])) return nullptr;
  }
  // K may be symbolic (unbatched only): the panels are then sized at each run whose K
  // differs from the last one's. N is static and non-empty.
  const int64_t n = w.shape[w.rank - 1];
  const bool dynamic_k = w.shape[w.rank - 2] < 0 && batch_rank == 0;
  const int64_t k = dynamic_k ? 1 : w.shape[w.rank - 2];
  // An empty K gives the bias alone: the reference's.
  if (k <= 0 || n <= 0 || (!dynamic_k && a.shape[a.rank - 1] >= 0 && a.shape[a.rank - 1] != k)) return nullptr;
  if (k > kMaxRunTimeWeightBytes / int64_t(sizeof(float)) / n) return nullptr;
  const bool fused = in.size() == 3;
  if (fused && (!is_f32(in[2]) || in[2].rank != 1 || (in[2].shape[0] >= 0 && in[2].shape[0] != n))) return nullptr;
  if (!fused && activation != ops::attr::kActNone) return nullptr;
  if (activation != ops::attr::kActNone && activation != ops::attr::kActRelu && activation != ops::attr::kActTanh)
    return nullptr;
  // AVX-512's 32-wide panels where they are mostly real columns (packed_gemm_isa's
  // rule), AVX2's 16-wide ones otherwise.
  Isa isa = best_isa();
  if (isa == Isa::kAvx512 && !packed_gemm_isa(n)) isa = Isa::kAvx2;
  if (isa == Isa::kBaseline) return nullptr;
  std::optional<PackedPanels> panels = allocate_panels(isa, size_t(k), size_t(n), false);
  if (!panels) return nullptr;
  const PackFn pack = isa == Isa::kAvx512 ? pack_avx512 : pack_avx2;
  const DirectFn direct = isa == Isa::kAvx512 ? direct_avx512 : direct_avx2;
  std::unique_ptr<PreparedKernel> fallback;
  if (batch_rank > 0 && !(fallback = make_batch_matmul(in))) return nullptr;
  std::string name = std::string(batch_rank > 0 ? "sg:run_time_batch_gemm_f32(" : "sg:run_time_gemm_f32(") +
                     panels->isa.name + ")";
  if (fused) name += "+bias";
  if (activation == ops::attr::kActRelu) name += "+relu";
  if (activation == ops::attr::kActTanh) name += "+sg:tanh_f32";
  ops::Attrs attrs;
  if (fused) attrs.values = {ops::AttrValue::Int(activation)};
  auto kernel = std::make_unique<RunTimeGemmKernel>(std::move(*panels), pack, direct,
                                                    fused ? ops::OpId::FullyConnected : ops::OpId::MatMul,
                                                    std::move(attrs), k, n, activation == ops::attr::kActRelu,
                                                    activation == ops::attr::kActTanh, std::move(name), batch_rank,
                                                    std::move(fallback));
  kernel->dynamic_k_ = dynamic_k;
  kernel->panel_isa_ = isa;
  return kernel;
#else
  (void)in;
  (void)activation;
  return nullptr;
#endif
}

}  // namespace sg::kernels::xnn
