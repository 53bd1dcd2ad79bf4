// matmul with a constant rank-2 right operand, and fully_connected with constant
// weights and bias, on our packed-weight GEMM (dense_gemm.h). The weights are
// packed once here; each run checks the overflow bound (xnn_common.h: an input
// that could overflow, or holds NaN or infinity, runs the reference kernel, so
// infinities and NaNs come out exactly as NumPy's), then splits column panels
// (and rows, when there are fewer panels than threads) over the Session's threads.

#include <algorithm>
#include <new>
#include <string>

#include "simd/dense_gemm.h"
#include "simd/simd_kernels.h"

namespace sg::kernels::xnn {
namespace {

using simd::Isa;
using simd::best_isa;

AlignedFloats aligned_floats(size_t n) {
  return AlignedFloats(static_cast<float*>(::operator new[](n * sizeof(float), std::align_val_t(64), std::nothrow)));
}

// The K block of one panel fills about half of the 48 KiB L1 of the machines this
// was tuned on, leaving the rest to the rows of A and the tile of C.
constexpr size_t kBlockBytes = 24 * 1024;

bool gemm_isa(Isa isa, GemmIsa& out) {
#ifdef SG_SIMD_X86
  if (isa == Isa::kAvx512) {
    out = {gemm_avx512, kAvx512MR, kAvx512NR, kBlockBytes, "avx512"};
    return true;
  }
  if (isa == Isa::kAvx2) {
    out = {gemm_avx2, kAvx2MR, kAvx2NR, kBlockBytes, "avx2"};
    return true;
  }
#endif
  (void)isa;
  (void)out;
  return false;
}

// Task i: row tile i / panel_parts, panel tile i % panel_parts.
struct Split {
  const GemmArgs* args;
  GemmFn fn;
  const KernelContext* ctx;
  size_t m, panels, row_tile, panel_tile, panel_parts;
};

void run_split(void* context, size_t i) {
  const Split& s = *static_cast<const Split*>(context);
  const size_t row = i / s.panel_parts * s.row_tile, panel = i % s.panel_parts * s.panel_tile;
  run_rows_interruptibly(*s.ctx, s.fn, *s.args, row, std::min(s.m, row + s.row_tile), panel,
                         std::min(s.panels, panel + s.panel_tile));
}

class PackedGemmKernel final : public PreparedKernel {
 public:
  // `run_time_bias`: fully_connected's bias is an input of each run (input 2), not packed.
  PackedGemmKernel(PackedPanels packed, ops::OpId op, ops::Attrs attrs, int64_t k, int64_t n, bool relu, bool tanh,
                   bool run_time_bias, OverflowBound bound, std::string name)
      : packed_(std::move(packed)), op_(op), attrs_(std::move(attrs)), k_(k), n_(n), relu_(relu), tanh_(tanh),
        run_time_bias_(run_time_bias), bound_(bound), name_(std::move(name)), simd_(best_isa()) {}

  Status run(const KernelContext& ctx, std::span<const TensorRef> in, std::span<TensorRef> out) override {
    SG_RETURN_IF_ERROR(check_dense_operands(op_, k_, n_, in, out));
    const TensorRef &a = in[0], &o = out[0];
    const size_t m = size_t(a.numel() / k_);
    if (m == 0) return Status::Ok();
    if (!bound_.safe(max_magnitude(a.as<const float>(), size_t(a.numel()), simd_)))
      return run_reference(op_, attrs_, ctx, in, out);
    run_packed(packed_, a.as<const float>(), size_t(k_), o.as<float>(), size_t(n_), m, relu_, ctx,
               run_time_bias_ ? in[2].as<const float>() : nullptr);
    if (ctx.interrupted()) return interrupted_status();
    if (tanh_) tanh_f32(ctx, simd_, o.as<float>(), o.as<float>(), m * size_t(n_));
    return Status::Ok();
  }
  const char* name() const override { return name_.c_str(); }
  size_t memory_bytes() const override { return packed_.bytes(); }

 private:
  PackedPanels packed_;
  ops::OpId op_;  // matmul or fully_connected, for the reference kernel
  ops::Attrs attrs_;
  int64_t k_, n_;
  bool relu_, tanh_, run_time_bias_;
  OverflowBound bound_;
  std::string name_;
  Isa simd_;  // for the overflow bound's scan
};

}  // namespace

void AlignedDelete::operator()(float* p) const { ::operator delete[](p, std::align_val_t(64)); }

size_t PackedPanels::bytes() const {
  const size_t padded = (n + isa.nr - 1) / isa.nr * isa.nr;
  return (k + (bias ? 1 : 0)) * padded * sizeof(float);
}

std::optional<PackedPanels> allocate_panels(Isa isa, size_t k, size_t n, bool with_bias) {
  PackedPanels p;
  if (!gemm_isa(isa, p.isa) || int(isa) > int(best_isa())) return std::nullopt;
  const size_t nr = p.isa.nr, panels = (n + nr - 1) / nr;
  p.w = aligned_floats(panels * k * nr);
  if (!p.w) return std::nullopt;
  if (with_bias) {
    p.bias = aligned_floats(panels * nr);
    if (!p.bias) return std::nullopt;
  }
  p.k = k;
  p.n = n;
  const size_t kc_max = std::max<size_t>(1, p.isa.kc_bytes / (nr * sizeof(float)));
  const size_t blocks = std::max<size_t>(1, (k + kc_max - 1) / kc_max);
  p.kc = (k + blocks - 1) / blocks;  // equal blocks: no short last block
  return p;
}

std::optional<PackedPanels> pack_panels(Isa isa, const float* w, size_t k, size_t n, const float* bias) {
  std::optional<PackedPanels> p = allocate_panels(isa, k, n, bias != nullptr);
  if (p) repack_panels(*p, w, bias);
  return p;
}

void repack_panels(PackedPanels& p, const float* w, const float* bias) {
  const size_t nr = p.isa.nr, k = p.k, n = p.n, panels = (n + nr - 1) / nr;
  for (size_t q = 0; q < panels; ++q) {
    const size_t c0 = q * nr, cols = std::min(nr, n - c0);
    float* panel = p.w.get() + q * k * nr;
    for (size_t r = 0; r < k; ++r) {
      std::copy_n(w + r * n + c0, cols, panel + r * nr);
      std::fill(panel + r * nr + cols, panel + (r + 1) * nr, 0.0f);
    }
  }
  if (bias != nullptr && p.bias) std::fill_n(std::copy_n(bias, n, p.bias.get()), panels * nr - n, 0.0f);
}

void run_rows_interruptibly(const KernelContext& ctx, GemmFn fn, const GemmArgs& g, size_t row_begin,
                            size_t row_end, size_t panel_begin, size_t panel_end) {
  for (size_t row = row_begin; row < row_end; row += kInterruptRows) {
    if (ctx.interrupted()) return;
    fn(g, row, std::min(row_end, row + kInterruptRows), panel_begin, panel_end);
  }
}

void run_packed(const PackedPanels& p, const float* a, size_t lda, float* c, size_t ldc, size_t m, bool relu,
                const KernelContext& ctx, const float* bias) {
  const size_t threads = threads_of(ctx);
  const GemmArgs args{a, lda, p.w.get(), bias != nullptr ? bias : p.bias.get(), c, ldc, p.n, p.k, p.kc, relu};
  const size_t panels = (p.n + p.isa.nr - 1) / p.isa.nr;
  if (threads <= 1 || 2 * m * p.k * p.n < (ctx.team != nullptr ? kMinTeamGemmFlops : kMinParallelGemmFlops)) {
    run_rows_interruptibly(ctx, p.isa.fn, args, 0, m, 0, panels);
    return;
  }
  // Whole panels per thread, all rows (each weight block is then read by one
  // thread only); rows are split too when there are fewer panels than threads.
  const size_t panel_tile = (panels + threads - 1) / threads;
  const size_t panel_parts = (panels + panel_tile - 1) / panel_tile;
  const size_t row_parts = (threads + panel_parts - 1) / panel_parts;
  const size_t row_tile = ((m + row_parts - 1) / row_parts + p.isa.mr - 1) / p.isa.mr * p.isa.mr;
  Split split{&args, p.isa.fn, &ctx, m, panels, row_tile, panel_tile, panel_parts};
  parallelize(ctx, run_split, &split, (m + row_tile - 1) / row_tile * panel_parts);
}

void run_packed_rows(const PackedPanels& p, const float* a, size_t lda, float* c, size_t ldc, size_t row_begin,
                     size_t row_end, bool relu, const float* bias) {
  const GemmArgs args{a, lda, p.w.get(), bias != nullptr ? bias : p.bias.get(), c, ldc, p.n, p.k, p.kc, relu};
  p.isa.fn(args, row_begin, row_end, 0, (p.n + p.isa.nr - 1) / p.isa.nr);
}

std::optional<Isa> packed_gemm_isa(int64_t n) {
#ifdef SG_SIMD_X86
  if (n <= 0) return std::nullopt;
  switch (best_isa()) {
    case Isa::kAvx512: {
      const int64_t nr = int64_t(kAvx512NR), padded = (n + nr - 1) / nr * nr;
      if (10 * n >= 7 * padded) return Isa::kAvx512;
      return std::nullopt;
    }
    case Isa::kAvx2: return Isa::kAvx2;
    default: return std::nullopt;
  }
#else
  (void)n;
  return std::nullopt;
#endif
}

std::unique_ptr<PreparedKernel> make_packed_gemm(std::span<const InputInfo> in, int64_t activation, Isa isa) {
  // A bias computed at run time (an RNN cell's x @ W row beside h @ U) is added in
  // the last store, as a packed one is: no second pass over the output. rnn at one
  // thread (EPYC, Zen 3): median 0.404 -> 0.384 ms, outputs byte-identical.
  // A tanh activation is one pass of sg:tanh_f32 over the output after the GEMM
  // (over a row in cache: a 1 x 256 RNN step's tanh); the stores apply the rest.
  const bool run_time_bias = in.size() == 3 && in[2].constant == nullptr;
  const bool tanh = in.size() == 3 && activation == ops::attr::kActTanh;
  const int64_t stored = tanh ? ops::attr::kActNone : activation;
  const std::optional<DenseLayer> layer =
      run_time_bias ? dense_layer_of(in.first(2), ops::attr::kActNone) : dense_layer_of(in, stored);
  if (!layer) return nullptr;
  const int64_t k = layer->k, n = layer->n;
  if (run_time_bias && (!is_f32(in[2]) || in[2].rank != 1 || (in[2].shape[0] >= 0 && in[2].shape[0] != n) ||
                        (stored != ops::attr::kActNone && stored != ops::attr::kActRelu)))
    return nullptr;
  const bool fused = in.size() == 3;
  const float* w = layer->w;
  const float* bias = layer->bias;  // null for a run-time bias

  std::optional<PackedPanels> packed = pack_panels(isa, w, size_t(k), size_t(n), bias);
  if (!packed) return nullptr;
  std::string name = std::string("sg:packed_gemm_f32(") + packed->isa.name + ")";
  if (fused) name += run_time_bias ? "+run_time_bias" : "+bias";
  if (activation == ops::attr::kActRelu) name += "+relu";
  if (tanh) name += "+sg:tanh_f32";
  ops::Attrs attrs;
  if (fused) attrs.values = {ops::AttrValue::Int(activation)};
  return std::make_unique<PackedGemmKernel>(std::move(*packed), fused ? ops::OpId::FullyConnected : ops::OpId::MatMul,
                                            std::move(attrs), k, n, stored == ops::attr::kActRelu, tanh,
                                            run_time_bias, OverflowBound::of(w, size_t(k), size_t(n), bias),
                                            std::move(name));
}

}  // namespace sg::kernels::xnn
