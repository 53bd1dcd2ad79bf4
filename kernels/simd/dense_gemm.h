// Our own f32 GEMM for dense layers with constant weights: C = A · W (+ bias,
// relu), with W packed once at prepare time.
//
// Layout of the packed weights: N is cut into panels of NR columns (the last one
// zero-padded), each panel stored [K][NR], so a block of KC consecutive k of one
// panel is one contiguous KC·NR·4-byte run that stays in L1 while every row tile
// of the task streams through it. The micro-kernels keep an MR x NR tile of C in
// vector registers for one K block; C is reloaded between K blocks, and the bias
// and relu are applied in the store of the last block (relu as a compare and
// select, so NaN stays NaN as in NumPy).
//
// One instruction set per file (dense_gemm_avx512.cc, dense_gemm_avx2.cc), each
// compiled with per-function target attributes and chosen at prepare time; other
// CPUs (and other architectures) keep XNNPACK's fully connected operator.
#pragma once


#include <cstddef>
#include <memory>
#include <optional>

#include "interface/kernel.h"
#include "simd/simd.h"

namespace sg::kernels::xnn {

// One call of a micro-kernel driver: rows [row_begin, row_end) of C, column panels
// [panel_begin, panel_end).
struct GemmArgs {
  const float* a;     // [M][lda], row-major
  size_t lda;
  const float* w;     // packed: panels of [k][nr]
  const float* bias;  // [n] (read only in the valid columns of each panel), or null
  float* c;           // [M][ldc]
  size_t ldc;
  size_t n, k;
  size_t kc;  // K block
  bool relu;
};

using GemmFn = void (*)(const GemmArgs& g, size_t row_begin, size_t row_end, size_t panel_begin, size_t panel_end);

// The micro-kernel geometry of one instruction set.
struct GemmIsa {
  GemmFn fn;
  size_t mr, nr;
  size_t kc_bytes;  // the largest K block of one panel, in bytes of packed weights
  const char* name;
};

#ifdef SG_SIMD_X86
// 8 x 32 tiles (16 zmm accumulators).
void gemm_avx512(const GemmArgs& g, size_t row_begin, size_t row_end, size_t panel_begin, size_t panel_end);
inline constexpr size_t kAvx512MR = 8, kAvx512NR = 32;
// 6 x 16 tiles (12 ymm accumulators).
void gemm_avx2(const GemmArgs& g, size_t row_begin, size_t row_end, size_t panel_begin, size_t panel_end);
inline constexpr size_t kAvx2MR = 6, kAvx2NR = 16;
#endif

struct AlignedDelete {
  void operator()(float* p) const;
};
using AlignedFloats = std::unique_ptr<float[], AlignedDelete>;

// Weights [k][n] (row-major, channel fastest) and their bias [n] packed for one
// instruction set's micro-kernels, with the K block that keeps a panel in L1.
struct PackedPanels {
  GemmIsa isa{};
  AlignedFloats w, bias;  // bias null: none
  size_t k = 0, n = 0, kc = 0;
  size_t bytes() const;
};
// Null where `isa` is not ours to run (baseline, or beyond this CPU) or memory ran out.
std::optional<PackedPanels> pack_panels(simd::Isa isa, const float* w, size_t k, size_t n, const float* bias);
// The same buffers, unfilled (with room for a bias when `with_bias`), for weights
// that arrive at run time through repack_panels.
std::optional<PackedPanels> allocate_panels(simd::Isa isa, size_t k, size_t n, bool with_bias);
// Packs new weights (and bias, where `p` was made with one) of the same k and n
// into `p`'s buffers: a layer whose weights are run-time inputs.
void repack_panels(PackedPanels& p, const float* w, const float* bias);

// A single-row product whose share of the weights (one call's panels) is larger
// than this streams them from L3, where the hardware prefetcher does better
// without ours: on an EPYC (Zen 4, 1 MiB L2) mlp at batch 1 (784 -> 512 -> 512, 1.6
// and 1 MiB of weights) went 0.038 -> 0.029 ms, and a bare matrix-vector loop over
// 1024 x 1024 ran 84 -> 92-96 GB/s (AVX-512) and 63-69 -> 82 GB/s (AVX2). From L2
// (rnn's 256 KiB, beam's 508 KiB) the two are within noise, the prefetch ahead by
// a little on Zen 4 and by 5% on Zen 3 (dense_gemm_avx2.cc).
inline constexpr size_t kMaxPrefetchBytes = 768 * 1024;

// Below about 200k FLOPs (a few µs) waking a second thread costs more than it
// saves: a tree RNN's 1 x 128 -> 64 cells ran 2x slower on two threads, and the
// rnn benchmark's 1 x 256 -> 256 step (131k) 1.15x slower; beam's 1 x 128 -> 1000
// logits (256k FLOPs, 512 KB of weights read from L2) ran 1.15x faster split.
inline constexpr size_t kMinParallelGemmFlops = 200000;
// On a Team (kernel.h) the hand-off is 0.1-0.2 µs, and the rnn benchmark's step
// (131k FLOPs, 256 KB of weights, 2 µs on one core) pays for splitting.
inline constexpr size_t kMinTeamGemmFlops = 50000;

// Rows the micro-kernels take per call between two looks at the run's interrupt
// flag (KernelContext::interrupted), so that a cancel or a timeout lands within
// one such block, not one whole product: a multiple of every MR (6 and 8). 384
// rows of a 784-deep product against one 16-column panel are about 10 MFLOP.
inline constexpr size_t kInterruptRows = 384;

// fn(g, ...) over rows [row_begin, row_end) and panels [panel_begin, panel_end),
// kInterruptRows rows at a time, stopping between blocks once `ctx` is
// interrupted (the same tiles, so the same results, as one call).
void run_rows_interruptibly(const KernelContext& ctx, GemmFn fn, const GemmArgs& g, size_t row_begin,
                            size_t row_end, size_t panel_begin, size_t panel_end);

// C [m][ldc] = A [m][lda] · W (+ bias, then relu), split over the context's team
// or pool when the product is large enough to pay for handing it out. The bias is
// `p`'s, or `bias` [n] where that is not null (one computed at run time). Stops
// early, C unfinished, when ctx.interrupted() (the caller then returns
// interrupted_status()).
void run_packed(const PackedPanels& p, const float* a, size_t lda, float* c, size_t ldc, size_t m, bool relu,
                const KernelContext& ctx, const float* bias = nullptr);
// Rows [row_begin, row_end) of the same product, all columns, on this thread.
void run_packed_rows(const PackedPanels& p, const float* a, size_t lda, float* c, size_t ldc, size_t row_begin,
                     size_t row_end, bool relu, const float* bias = nullptr);

}  // namespace sg::kernels::xnn
