// Element types of Stagegraph tensors (SPEC.md §2-§3). There is no float64.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace sg {

// The numeric values match the schema's sg.fb.DType.
enum class DType : uint8_t { kF32 = 0, kF16 = 1, kI32 = 2, kI64 = 3, kBool = 4 };
inline constexpr int kNumDTypes = 5;

constexpr size_t dtype_size(DType t) {
  switch (t) {
    case DType::kF32: return 4;
    case DType::kF16: return 2;
    case DType::kI32: return 4;
    case DType::kI64: return 8;
    case DType::kBool: return 1;
  }
  return 0;
}

// "f32", "f16", "i32", "i64", "bool" — the names used in messages, the eager
// module (sg.f32, ...) and graph-inspect.
constexpr const char* dtype_name(DType t) {
  switch (t) {
    case DType::kF32: return "f32";
    case DType::kF16: return "f16";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
    case DType::kBool: return "bool";
  }
  return "?";
}

constexpr bool is_float(DType t) { return t == DType::kF32 || t == DType::kF16; }
constexpr bool is_int(DType t) { return t == DType::kI32 || t == DType::kI64; }

inline std::optional<DType> dtype_from_name(std::string_view s) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (s == dtype_name(DType(i))) return DType(i);
  return std::nullopt;
}

// IEEE binary16 <-> binary32, round-to-nearest-even. Storage type for f16 is uint16_t.
inline float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1F;
  uint32_t mant = h & 0x3FF;
  uint32_t bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (mant << 13);  // inf / nan
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal: normalize
    exp = 113;
    while ((mant & 0x400) == 0) { mant <<= 1; --exp; }
    bits = sign | (exp << 23) | ((mant & 0x3FF) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000);
  const uint32_t absx = x & 0x7FFFFFFFu;
  if (absx >= 0x7F800000u) return uint16_t(sign | 0x7C00 | (absx > 0x7F800000u ? 0x200 : 0));
  if (absx >= 0x477FF000u) return uint16_t(sign | 0x7C00);  // rounds to inf
  if (absx < 0x38800000u) {                                   // subnormal or zero
    if (absx < 0x33000000u) return sign;
    const uint32_t e = absx >> 23;
    const uint32_t m = (absx & 0x7FFFFF) | 0x800000;
    const uint32_t shift = 126 - e;  // 14..24
    uint32_t r = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1))) ++r;
    return uint16_t(sign | r);
  }
  uint32_t r = absx - 0x38000000u;  // rebias exponent
  const uint32_t rem = r & 0x1FFF;
  r >>= 13;
  if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) ++r;
  return uint16_t(sign | r);
}

}  // namespace sg
