// Scalar functors of the elementwise binary ops, templated on the compute type
// C. Integer arithmetic wraps (NumPy); floor division and modulo follow Python's
// floor semantics, with NumPy's float algorithm (npy_divmod).
// Part of the kernel interface: the reference kernels compute with them, and the
// runtime's register instructions (runtime/src/executor_registers.cc) compute the
// same bytes with them on rank-0 operands without calling a kernel.
#pragma once

#include <cmath>
#include <type_traits>

namespace sg::kernels {

// Integer arithmetic that wraps like two's complement (NumPy), computed in the
// unsigned type so that overflow is defined.
template <class T>
inline T wrap_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return T(U(a) + U(b));
}
template <class T>
inline T wrap_sub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return T(U(a) - U(b));
}
template <class T>
inline T wrap_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return T(U(a) * U(b));
}

}  // namespace sg::kernels

namespace sg::kernels::binary {

template <class C> inline constexpr bool kIsInt = std::is_integral_v<C> && !std::is_same_v<C, bool>;

template <class C>
inline bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>) return std::isnan(v);
  else return false;
}

// How the compute type is chosen from the operand (In) and result (Out) dtypes.
enum class Kind { kArithmetic, kComparison, kLogical };

struct Add {
  static constexpr const char* kName = "add";
  static constexpr Kind kKind = Kind::kArithmetic;
  template <class C> static C apply(C a, C b) {
    if constexpr (kIsInt<C>) return wrap_add(a, b);
    else return C(a + b);
  }
};
struct Sub {
  static constexpr const char* kName = "sub";
  static constexpr Kind kKind = Kind::kArithmetic;
  template <class C> static C apply(C a, C b) {
    if constexpr (kIsInt<C>) return wrap_sub(a, b);
    else if constexpr (std::is_same_v<C, bool>) return a != b;
    else return a - b;
  }
};
struct Mul {
  static constexpr const char* kName = "mul";
  static constexpr Kind kKind = Kind::kArithmetic;
  template <class C> static C apply(C a, C b) {
    if constexpr (kIsInt<C>) return wrap_mul(a, b);
    else if constexpr (std::is_same_v<C, bool>) return a && b;
    else return a * b;
  }
};
struct Div {
  static constexpr const char* kName = "div";
  static constexpr Kind kKind = Kind::kArithmetic;
  template <class C> static C apply(C a, C b) {
    // Integer operands give a float result (SPEC §3), so C is floating here;
    // an integer C only arises for a malformed graph and must not trap.
    if constexpr (std::is_floating_point_v<C>) return a / b;
    else if constexpr (kIsInt<C>) return b == 0 ? C(0) : b == C(-1) ? wrap_sub(C(0), a) : C(a / b);
    else return b ? C(a / b) : C(0);
  }
};
struct FloorDiv {
  static constexpr const char* kName = "floordiv";
  static constexpr Kind kKind = Kind::kArithmetic;
  template <class C> static C apply(C a, C b) {
    if constexpr (std::is_floating_point_v<C>) {
      if (b == 0) return a / b;
      const C mod = std::fmod(a, b);
      C div = (a - mod) / b;
      if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
      if (div == 0) return std::copysign(C(0), a / b);
      C fl = std::floor(div);
      if (div - fl > C(0.5)) fl += 1;
      return fl;
    } else if constexpr (std::is_same_v<C, bool>) {
      return a;  // b is true: zero divisors were rejected before the loop
    } else {
      if (b == -1) return wrap_sub(C(0), a);  // MIN / -1 wraps instead of trapping
      C q = C(a / b);
      if (a % b != 0 && ((a < 0) != (b < 0))) --q;
      return q;
    }
  }
};
struct Mod {
  static constexpr const char* kName = "mod";
  static constexpr Kind kKind = Kind::kArithmetic;
  template <class C> static C apply(C a, C b) {
    if constexpr (std::is_floating_point_v<C>) {
      if (b == 0) return std::fmod(a, b);
      C mod = std::fmod(a, b);
      if (mod == 0) return std::copysign(C(0), b);
      if ((b < 0) != (mod < 0)) mod += b;
      return mod;
    } else if constexpr (std::is_same_v<C, bool>) {
      return false;
    } else {
      if (b == -1) return 0;
      C r = C(a % b);
      if (r != 0 && ((r < 0) != (b < 0))) r = C(r + b);
      return r;
    }
  }
};
struct Pow {
  static constexpr const char* kName = "pow";
  static constexpr Kind kKind = Kind::kArithmetic;
  template <class C> static C apply(C a, C b) {
    if constexpr (std::is_floating_point_v<C>) {
      return std::pow(a, b);
    } else if constexpr (std::is_same_v<C, bool>) {
      return a || !b;
    } else {
      // b >= 0: negative exponents were rejected before the loop.
      using U = std::make_unsigned_t<C>;
      U result = 1, base = U(a);
      for (C e = b; e > 0; e >>= 1) {
        if (e & 1) result *= base;
        base *= base;
      }
      return C(result);
    }
  }
};
// NaN-propagating, like np.maximum / np.minimum.
struct Maximum {
  static constexpr const char* kName = "maximum";
  static constexpr Kind kKind = Kind::kArithmetic;
  template <class C> static C apply(C a, C b) { return (a >= b || is_nan(a)) ? a : b; }
};
struct Minimum {
  static constexpr const char* kName = "minimum";
  static constexpr Kind kKind = Kind::kArithmetic;
  template <class C> static C apply(C a, C b) { return (a <= b || is_nan(a)) ? a : b; }
};

#define SG_COMPARISON(Name, str, expr)                          \
  struct Name {                                                 \
    static constexpr const char* kName = str;                   \
    static constexpr Kind kKind = Kind::kComparison;            \
    template <class C> static bool apply(C a, C b) { return expr; } \
  };
SG_COMPARISON(Less, "less", a < b)
SG_COMPARISON(LessEqual, "less_equal", a <= b)
SG_COMPARISON(Greater, "greater", a > b)
SG_COMPARISON(GreaterEqual, "greater_equal", a >= b)
SG_COMPARISON(Equal, "equal", a == b)
SG_COMPARISON(NotEqual, "not_equal", a != b)
#undef SG_COMPARISON

struct LogicalAnd {
  static constexpr const char* kName = "logical_and";
  static constexpr Kind kKind = Kind::kLogical;
  static bool apply(bool a, bool b) { return a && b; }
};
struct LogicalOr {
  static constexpr const char* kName = "logical_or";
  static constexpr Kind kKind = Kind::kLogical;
  static bool apply(bool a, bool b) { return a || b; }
};

}  // namespace sg::kernels::binary
