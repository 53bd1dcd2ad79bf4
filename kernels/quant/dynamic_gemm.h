// C[M][N] = A[M][K] · W[K][N] for int8 and int4 weights with the activations
// quantized per run (SPEC.md §13, "dynamic quantization"): each row of A gets a
// symmetric int8 scale of its own, the products are integer dot products summed
// exactly in int32, and the scales are applied once at the end (int8) or once per
// K block (int4). What is computed, exactly:
//
//   row r of A:  amax = max_k |a[k]|;  sa = amax / 127;  inv = 127 / amax (f32 each)
//                q[k] = clamp(rint(a[k] * inv), -127, 127)   (round half to even)
//                (amax == 0: sa = 0, q = 0;  amax not finite: the row is computed
//                 with the widened weights in f32 instead, so NaN and inf propagate)
//   int8 (scale sw[n] per column):  C[r][n] = (f32(sum_k q[k] w[k][n]) * sa) * sw[n]
//   int4 (scale s[b][n] per block b of K):
//                acc = 0;  for each block b in order:
//                acc = fma(f32(sum_{k in b} q[k] w[k][n]), s[b][n], acc)
//                C[r][n] = acc * sa
//
// The integer sums are exact, so the reference kernel (the stored layout, element by
// element) and the SIMD kernels (weights packed into column panels once, at load)
// agree bit for bit. int8 needs K <= kMaxDynamicK (127 * 127 * K must fit int32);
// longer rows use the weight-only kernels of quantized_gemm.h.
//
// Kernels: AVX2 (vpmovsxbw + vpmaddwd on pairs of K: exact, no vpmaddubsw
// saturation), AVX-512 VNNI (vpdpbusd on quadruples of K, activations offset to
// uint8 and the offset taken back with per-column weight sums), AVX-VNNI (the same
// on 256 bits and 8-column panels, int8, for CPUs without AVX-512), NEON dot product
// on aarch64 (sdot: signed x signed quadruples of K, so neither offset nor sums),
// the reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "quant/epilogue.h"
#include "quant/weight_format.h"

namespace sg::kernels::quant {

inline constexpr size_t kMaxDynamicK = 133000;  // 133000 * 127 * 127 < 2^31

enum class DynIsa { kReference, kAvx2, kAvx512Vnni, kNeonDot, kAvxVnni };
const char* dyn_isa_name(DynIsa isa);

// Whether `l` ([K][N] weights) has dynamic kernels: int8 per column (axis 1) with
// K <= kMaxDynamicK, int4 in blocks along K (axis 0).
bool dynamic_layout(const Layout& l);
// The best kernel this CPU runs for such a layout (kReference off x86-64 and off
// aarch64 Linux with the dot-product extension).
DynIsa best_dyn_isa(const Layout& l);
// Every SIMD kernel this CPU runs for such a layout, the best last (empty: none).
std::vector<DynIsa> runnable_dyn_isas(const Layout& l);

// One row of A quantized as above; false (q all 0, *scale 0) when amax is not finite.
bool quantize_row(const float* a, size_t k, int8_t* q, float* scale);
// The same without SIMD (what quantize_row runs off AVX2), for the tests.
bool quantize_row_portable(const float* a, size_t k, int8_t* q, float* scale);

// W packed for one SIMD kernel: column panels (8 columns for AVX2 and AVX-VNNI, 16 for
// VNNI and NEON dot), each
// K block padded to a multiple of 4 (AVX2 int4: 8) with zero weights, steps of 4 K
// contiguous; the scales widened to f32 and padded to whole panels. int4 stays 4
// bits a weight: AVX2 stores w + 8 and multiplies the unsigned nibbles by the signed
// activations (vpmaddubsw: pairs of at most 2 x 15 x 127, 4 pairs summed in int16
// stay below 2^15), less 8 x the block's activation sum. VNNI and NEON dot share a
// layout (a step: 16 columns x 4 K, the 4 K of a column adjacent; int4: element j
// in the low nibble of byte j, element j + 32 in its high nibble); AVX-VNNI's is it
// on 8 columns.
struct PackedWeights {
  DynIsa isa = DynIsa::kReference;
  Storage storage = Storage::kInt8;
  size_t k = 0, n = 0;
  size_t block = 0;        // K per block (int8: K)
  size_t block_pad = 0;    // block rounded up to a multiple of 4
  size_t blocks = 0;       // K / block
  size_t nr = 0;           // columns per panel
  size_t panels = 0;       // ceil(n / nr)
  size_t panel_bytes = 0;  // bytes of one panel (all blocks)
  AlignedVector<uint8_t> data;
  AlignedVector<float> scales;    // int8: [panels*nr]; int4: [blocks][panels*nr]
  AlignedVector<int32_t> colsum;  // VNNI: 128 * sum of each block's weights, [blocks][panels*nr]
  // VNNI int8 where the CPU has AMX (and the OS lets this process use it): rows in
  // blocks of 16 run as AMX tiles (tdpbusd) over the same panels, read as B tiles of
  // 16 steps (K 64) x 64 bytes; the activations' rows then run to a multiple of 64.
  bool amx = false;
  size_t memory_bytes() const {
    return data.size() + scales.size() * sizeof(float) + colsum.size() * sizeof(int32_t);
  }
};

std::shared_ptr<const PackedWeights> pack_weights(const WeightView& w, DynIsa isa);

// The activations of one call, quantized as the kernel reads them: int16 (AVX2
// int8), int8 (AVX2 int4 and NEON dot, in a8) or uint8 offset by 128 (VNNI),
// [M][blocks][block_pad],
// padded with q = 0.
struct QuantizedRows {
  size_t stride = 0;  // elements from one row to the next (AMX: a multiple of 64, zeros past K)
  AlignedVector<int16_t> a16;
  AlignedVector<uint8_t> a8;
  std::vector<float> scale;       // sa per row
  std::vector<uint8_t> finite;    // 0: the row is computed in f32 (weight-only)
  std::vector<int32_t> offset;    // AVX2 int4: 8 x the sum of each block's q, [M][blocks]
};
void quantize_rows(const PackedWeights& p, const float* a, size_t m, QuantizedRows* out);

// A convolution's patches (conv2d, NHWC input, HWIO filter read as [kh*kw*c][cout]):
// each image of the input is quantized once as one row (a scale of its own, as
// TensorFlow Lite's hybrid convolutions do), then each output position's patch of
// those integers (the window's pixels in HWIO order, q = 0 outside the image) is a
// row, with the image's scale and verdict. Rows in order (n, oy, ox).
struct PatchGeometry {
  int64_t n = 0, h = 0, w = 0, c = 0;  // the input
  int64_t kh = 0, kw = 0;              // the window
  int64_t oh = 0, ow = 0;              // the output
  int64_t sy = 1, sx = 1, dy = 1, dx = 1;
  int64_t py = 0, px = 0;              // padding before
};
void quantize_patches(const PackedWeights& p, const float* x, const PatchGeometry& g, QuantizedRows* out);

// Columns [col_begin, col_end) of C, all M rows (col_begin a multiple of the panel
// width), the epilogue applied in the store. Rows whose `finite` is 0 are left for
// the caller (epilogue included).
void dynamic_gemm_columns(const PackedWeights& p, const QuantizedRows& rows, size_t m, float* c, size_t col_begin,
                          size_t col_end, const Epilogue& e = {});
// The columns per unit of work (whole panels).
size_t dynamic_column_tile(DynIsa isa);

// The reference: the same arithmetic from the stored layout, rows with a non-finite
// value in f32 over the widened weights. C is [m][n].
void dynamic_gemm_reference(const WeightView& w, const float* a, float* c, size_t m);

namespace detail {
#if defined(__x86_64__) && defined(__GNUC__)
void dyn_avx2(const PackedWeights& p, const QuantizedRows& rows, size_t m, float* c, size_t panel_begin,
              size_t panel_end, const Epilogue& e);
void dyn_avx512vnni(const PackedWeights& p, const QuantizedRows& rows, size_t m, float* c, size_t panel_begin,
                    size_t panel_end, const Epilogue& e);
// AVX-VNNI (256-bit, int8 only) where the CPU has it: CPUID leaf 7.1 EAX bit 4.
bool cpu_avxvnni();
void dyn_avxvnni(const PackedWeights& p, const QuantizedRows& rows, size_t m, float* c, size_t panel_begin,
                 size_t panel_end, const Epilogue& e);
// Whether AMX's int8 tiles run here: the CPU has them and Linux granted this process
// their state (arch_prctl ARCH_REQ_XCOMP_PERM); asked once.
bool amx_ready();
// Rows [row, row + 16 * blocks16) of C for panels [pb, pe), on AMX tiles.
void dyn_amx_rows(const PackedWeights& p, const QuantizedRows& rows, size_t row, size_t blocks16, float* c,
                  size_t pb, size_t pe, const Epilogue& e);
// quantize_row into VNNI's operand: k bytes, q + 128 (flip) or q; with block_sums,
// each block's sum of q (block a multiple of 16 dividing k). The same scale and result.
bool quantize_row_avx512(const float* a, size_t k, uint8_t* dst, bool flip, size_t block, int32_t* block_sums,
                         float* scale);
// quantize_patches' rows for VNNI int8 from an image of q + 128 bytes (64 bytes past
// its end readable): 128 outside the image and from K to the block's end, zeros on
// to `stride`; up to 64 bytes past the last row written (QuantizedRows' slack).
void gather_patches_avx512(const PackedWeights& p, const PatchGeometry& g, const uint8_t* image, uint8_t* dst,
                           size_t stride);
#endif
#if defined(__aarch64__) && defined(__GNUC__)
void dyn_neondot(const PackedWeights& p, const QuantizedRows& rows, size_t m, float* c, size_t panel_begin,
                 size_t panel_end, const Epilogue& e);
#endif
}  // namespace detail

}  // namespace sg::kernels::quant
