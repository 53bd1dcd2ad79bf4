// Quantized and half-precision weights (SPEC.md §13): how a constant's bytes are
// stored when it is not plain f32, the checks the verifier makes on that layout,
// quantization (the compiler) and dequantization (the runtime's reference path),
// shared so that both sides compute the very same values.
//
//   storage  data (C order of the logical f32 tensor)   scales
//   int8     one int8 per element, symmetric            one per index of `axis` (the output
//                                                       channel), dtype `scale_type`
//   int4     two per byte, element i in the low nibble  one per block of `block` elements
//            of byte i/2 when i is even; signed         along `axis`: dims with dims[axis]
//            two's complement, -8..7                    divided by `block`, in C order
//   bf16     one bfloat16 per element                   none
//   f16      one IEEE binary16 per element              none
//
// A weight is q * scale (int8, int4) or the half value widened (bf16, f16), rounded
// to f32 once: the runtime's kernels and eager mode reproduce those values exactly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sg::kernels::quant {

enum class Storage : uint8_t { kF32 = 0, kInt8 = 1, kInt4 = 2, kBF16 = 3, kF16 = 4 };
inline constexpr int kNumStorages = 5;
enum class ScaleType : uint8_t { kF32 = 0, kF16 = 1, kBF16 = 2 };
inline constexpr int kNumScaleTypes = 3;

// The int4 block size when none is asked for.
inline constexpr int64_t kDefaultInt4Block = 32;

const char* storage_name(Storage s);   // "int8", "int4", "bf16", "f16", "f32"
const char* scale_type_name(ScaleType t);

struct Layout {
  Storage storage = Storage::kF32;
  int axis = 0;        // int8: the channel axis; int4: the blocked axis; else 0
  int64_t block = 0;   // int4 only, else 0
  ScaleType scale_type = ScaleType::kF32;
  std::vector<int64_t> dims;  // the logical f32 tensor's
};

// "" when the layout is consistent (a known storage and scale type, the axis within
// the rank, a block dividing its axis, no block or axis where the storage has none),
// else what is wrong. Dims are assumed >= 0 and of plausible size (checked before).
std::string check_layout(const Layout& l);

uint64_t element_count(const Layout& l);
uint64_t data_bytes(const Layout& l);
uint64_t scale_count(const Layout& l);
uint64_t scale_bytes(const Layout& l);

// bfloat16 <-> f32: truncation of the low half for widening, round to nearest even
// (NaN kept quiet) for narrowing.
float bf16_to_float(uint16_t h);
uint16_t float_to_bf16(float f);

// One scale of `scales` (stored as `t`) as f32.
float scale_at(ScaleType t, const uint8_t* scales, uint64_t i);

// The layout graph-compile gives a weight of `dims` in `storage` (eager mode's
// sg.weight(name, quantize=...) uses the same): int8 with a scale per index of the
// last axis (a dense layer's [K][N] output channel, a convolution's HWIO O); int4
// in blocks along the axis before it (K, I; axis 0 at rank 1) of the largest size
// <= `block` that divides it, f16 scales.
Layout default_layout(Storage storage, const std::vector<int64_t>& dims, int64_t block = kDefaultInt4Block);
// The weight read as a dense layer's [K][N] matrix: a rank-2 layout as it is; an
// HWIO convolution filter [kh][kw][I][O] as [kh*kw*I][O], which is the same bytes
// and scales when int8's scales run along O (axis 3 -> 1) and int4's blocks along I
// (axis 2 -> 0: a block never straddles two window taps, since it divides I); any
// other rank-4 layout keeps its rank (no dense view).
Layout gemm_layout(const Layout& l);
// "int8" -> kInt8, ...; false for other names.
bool storage_from_name(const std::string& name, Storage* out);

struct WeightView {
  const Layout* layout = nullptr;
  const uint8_t* data = nullptr;
  const uint8_t* scales = nullptr;  // null when the storage has none
};

// Elements [begin, begin + count) of the weight, in C order, as f32.
void dequantize(const WeightView& w, uint64_t begin, uint64_t count, float* out);

struct Quantized {
  std::vector<uint8_t> data, scales;
};
// Quantizes `w` (element_count(l) finite values) to `l`'s storage: symmetric, the
// scale max|w| / 127 (int8) or / 7 (int4, rounded to the scale type first), values
// rounded half to even.
Quantized quantize(const Layout& l, const float* w);

}  // namespace sg::kernels::quant
