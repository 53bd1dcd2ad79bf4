// C[M][N] = A[M][K] · W[K][N] for bf16 and f16 dense weights packed once into
// column panels of 16 for the AVX-512 kernels (SPEC.md §13). Two kernels:
//
//   kAvx512Widen (bf16 or f16, AVX-512F): the weights widened in registers, which
//     is exact, and acc = fma(a[k], w[k], acc) in k order: the f32 products over
//     the widened weights that eager mode and the other kernels compute. This is
//     the one the runtime picks.
//   kAvx512Bf16Dot (bf16 weights, AVX512_BF16; built and tested, not picked by
//     the runtime, since it changes the values): each row of A rounded to bf16
//     once per call (vcvtne2ps2bf16: nearest even, denormals to signed zero, NaN
//     quiet), then vdpbf16ps over pairs of K. Per column, in f32 with denormal
//     inputs and results flushed to zero:
//         acc = 0;  for each pair t:  acc = (acc + a[2t+1]·w[2t+1]) + a[2t]·w[2t]
//     (the bf16 products are exact in f32). An odd K is padded with a zero weight.
//     Rounding the activations moves results by up to 2^-8 of each product (eager
//     mode and CPUs without AVX512_BF16 do not round), and on Sapphire Rapids
//     vdpbf16ps beats the widening kernel only for a few rows (M = 1: ~1.1-1.3x)
//     and loses at batch 64 (~0.7x): picking it needs a load option and eager
//     mode to match.
//
// Panels: the dot kernel's step t holds K pair (2t, 2t+1) of its 16 columns
// interleaved (32 halves, 64 bytes: what vdpbf16ps reads); the widening kernel's
// step k one row of 16 halves. The last panel is padded with zero columns. Other
// CPUs (and other layouts) keep the kernels of quantized_gemm.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "quant/epilogue.h"
#include "quant/weight_format.h"

namespace sg::kernels::quant {

enum class HalfIsa { kNone, kAvx512Widen, kAvx512Bf16Dot };
const char* half_isa_name(HalfIsa isa);

// The panel kernel the runtime runs for `l` (bf16 or f16 [K][N] weights) on this
// CPU: kAvx512Widen where it has AVX-512F/BW/VL, else kNone.
HalfIsa best_half_isa(const Layout& l);
// Whether kAvx512Bf16Dot runs here for `l` (bf16 [K][N], AVX512_BF16).
bool bf16_dot_runs(const Layout& l);
// Whether the CPU has AVX512_BF16 (CPUID leaf 7 subleaf 1, EAX bit 5) beside AVX-512F/BW/VL.
bool cpu_has_avx512bf16();

struct HalfPanels {
  HalfIsa isa = HalfIsa::kNone;
  Storage storage = Storage::kBF16;
  size_t k = 0, n = 0;
  size_t kpad = 0;    // K rounded up to even (the dot kernel's pairs); the widening kernel: K
  size_t panels = 0;  // ceil(n / 16)
  AlignedVector<uint16_t> data;  // [panels][panel_halves()]
  // kpad * 16 and one cache line more, so that the panels a tile reads side by side
  // do not all fall in the same cache sets when K * 32 bytes is a multiple of 4 KB.
  size_t panel_halves() const { return kpad * 16 + 32; }
  size_t memory_bytes() const { return data.size() * sizeof(uint16_t); }
};
inline constexpr size_t kHalfPanel = 16;

std::shared_ptr<const HalfPanels> pack_half(const WeightView& w, HalfIsa isa);

// Rows of A rounded to bf16 as the dot kernel reads them: [m][kpad], the pad 0.
void round_rows_bf16(const float* a, size_t m, size_t k, size_t kpad, uint16_t* out);
// One value as vcvtne2ps2bf16 rounds it (the portable definition).
uint16_t round_activation_bf16(float x);

// Columns [col_begin, col_end) of C (col_begin a multiple of 16), all m rows. The
// dot kernel reads `a_bf16` (round_rows_bf16), the widening kernel `a`.
void half_gemm_columns(const HalfPanels& p, const float* a, const uint16_t* a_bf16, size_t m, float* c,
                       size_t col_begin, size_t col_end, Epilogue epilogue = {});
// The columns per unit of work (whole panels).
inline constexpr size_t kHalfColumnTile = 128;

// The arithmetic of kernel `isa` above, element by element from the stored layout
// (the tests compare the kernels with it). C is [m][n].
void half_gemm_reference(HalfIsa isa, const WeightView& w, const float* a, size_t m, float* c);

namespace detail {
#if defined(__x86_64__) && defined(__GNUC__)
void half_widen_avx512(const HalfPanels& p, const float* a, size_t m, float* c, size_t panel_begin,
                       size_t panel_end, const Epilogue& e);
void half_dot_avx512bf16(const HalfPanels& p, const uint16_t* a, size_t m, float* c, size_t panel_begin,
                         size_t panel_end, const Epilogue& e);
void round_rows_bf16_avx512(const float* a, size_t m, size_t k, size_t kpad, uint16_t* out);
#endif
}  // namespace detail

}  // namespace sg::kernels::quant
