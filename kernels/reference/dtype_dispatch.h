// Compile-time dtype traits and run-time -> compile-time dtype dispatch for the
// reference kernels. Kernels are templates over DType values (not C++ types)
// because f16 is stored as uint16_t and bool as uint8_t: a C++ type alone would
// not say which one is meant.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "stagegraph/dtype.h"
#include "stagegraph/status.h"

namespace sg::kernels {

template <DType D> struct DTypeTraits;
template <> struct DTypeTraits<DType::kF32> { using Storage = float; using Compute = float; };
template <> struct DTypeTraits<DType::kF16> { using Storage = uint16_t; using Compute = float; };
template <> struct DTypeTraits<DType::kI32> { using Storage = int32_t; using Compute = int32_t; };
template <> struct DTypeTraits<DType::kI64> { using Storage = int64_t; using Compute = int64_t; };
// bool is stored as one byte holding 0 or 1; uint8_t avoids the UB of reading a
// `bool` object holding any other byte.
template <> struct DTypeTraits<DType::kBool> { using Storage = uint8_t; using Compute = bool; };

template <DType D> using Storage = typename DTypeTraits<D>::Storage;
template <DType D> using Compute = typename DTypeTraits<D>::Compute;

template <DType D> using DTypeTag = std::integral_constant<DType, D>;

// Converts between arithmetic types the way NumPy's astype does for in-range values,
// without UB for the rest: float -> int truncates toward zero, NaN gives 0 and
// out-of-range values saturate; anything -> bool is `!= 0`.
template <class To, class From>
inline To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (std::isnan(v)) return To(0);
    // 2^(digits) is exactly representable in From; compare before casting.
    constexpr From hi = From(std::numeric_limits<To>::max()) + From(1);
    constexpr From lo = From(std::numeric_limits<To>::min());
    if (v >= hi) return std::numeric_limits<To>::max();
    if (v <= lo) return std::numeric_limits<To>::min();
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

template <DType D>
inline Compute<D> load(Storage<D> s) {
  if constexpr (D == DType::kF16) return half_to_float(s);
  else if constexpr (D == DType::kBool) return s != 0;
  else return s;
}

template <DType D, class V>
inline Storage<D> store(V v) {
  if constexpr (D == DType::kF16) return float_to_half(convert<float>(v));
  else if constexpr (D == DType::kBool) return uint8_t(v != V(0));
  else return convert<Storage<D>>(v);
}

// Calls f(DTypeTag<D>{}) for the run-time dtype t.
template <class F>
inline decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::kF32: return f(DTypeTag<DType::kF32>{});
    case DType::kF16: return f(DTypeTag<DType::kF16>{});
    case DType::kI32: return f(DTypeTag<DType::kI32>{});
    case DType::kI64: return f(DTypeTag<DType::kI64>{});
    case DType::kBool: break;
  }
  return f(DTypeTag<DType::kBool>{});
}

inline Status unsupported_dtypes(const char* op, DType in, DType out) {
  return internal_error(std::string(op) + ": no reference kernel for " + dtype_name(in) +
                        " -> " + dtype_name(out));
}

}  // namespace sg::kernels
