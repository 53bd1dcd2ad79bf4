// Dimensions, written once for both sides of the op table:
//   - at run time a dim is a concrete int64_t;
//   - at compile time it is a SymDim, a polynomial over symbol ids
//     (N, N*2, N-1, N*6*6*8, N*M + 3, ...) so that checks involving symbolic
//     dims are decided whenever they can be.
// Shape rules are templates over the dim type D and use only the overloads below.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace sg::ops {

// Three-valued answer to "are these dims equal": known yes, known no, or only the
// run-time binding can tell (then the run-time rule, with concrete dims, decides).
enum class Tri : uint8_t { kNo, kYes, kUnknown };

class SymDim {
 public:
  struct Term {
    int64_t coef;
    std::vector<int32_t> symbols;  // sorted ascending, repeats allowed (N*N)
    bool operator==(const Term&) const = default;
  };

  SymDim(int64_t value = 0) : constant_(value) {}  // NOLINT(implicit): dims are numbers
  static SymDim symbol(int32_t id);

  bool is_static() const { return terms_.empty(); }
  std::optional<int64_t> as_static() const {
    if (is_static()) return constant_;
    return std::nullopt;
  }
  int64_t constant() const { return constant_; }
  const std::vector<Term>& terms() const { return terms_; }
  // The single symbol id when this dim is exactly one symbol with coefficient 1.
  std::optional<int32_t> as_symbol() const;

  friend SymDim operator+(const SymDim& a, const SymDim& b);
  friend SymDim operator-(const SymDim& a, const SymDim& b);
  friend SymDim operator*(const SymDim& a, const SymDim& b);
  bool operator==(const SymDim& o) const = default;  // same polynomial

  // "N", "N*2", "N*M+3", "-1+N"... name(id) gives a symbol's name.
  std::string to_string(const std::function<std::string(int32_t)>& name) const;

 private:
  void normalize();
  int64_t constant_ = 0;
  std::vector<Term> terms_;  // sorted by symbols, no zero coefficients
};

// ---- the dim interface used by shape rules -------------------------------------

inline std::optional<int64_t> dim_static(int64_t d) { return d; }
inline std::optional<int64_t> dim_static(const SymDim& d) { return d.as_static(); }

inline Tri dim_equal(int64_t a, int64_t b) { return a == b ? Tri::kYes : Tri::kNo; }
// Equal polynomials: yes. Static and different, or differing by a nonzero
// constant (N vs N+1): no. Otherwise unknown.
Tri dim_equal(const SymDim& a, const SymDim& b);

// True when `a` and `b` are different multiples of one symbolic polynomial with
// non-negative coefficients (N*3 and N; T*64 and T*128): they agree only where
// that polynomial is 0, i.e. for empty tensors, which no binding means. The
// static and the other symbolic cases are dim_equal's.
inline bool dim_equal_only_when_empty(int64_t, int64_t) { return false; }
bool dim_equal_only_when_empty(const SymDim& a, const SymDim& b);

// True when no binding of the symbols (each a dim, so >= 0) makes `a` and `b`
// equal: a - b is sum c_i*m_i + k over monomials m_i >= 0, and it cannot be 0
// when gcd(|c_i|) does not divide k (N*2 and 5) or every c_i and k have one sign
// (N*2 + 3 and 1). Sound, not complete: false means "may be equal" (N*N and 2).
// Polynomials that differ by a constant are dim_equal's kNo and true here too.
inline bool dim_never_equal(int64_t a, int64_t b) { return a != b; }
bool dim_never_equal(const SymDim& a, const SymDim& b);

// a / b when b divides a exactly (b static and nonzero and dividing every
// coefficient, or b a factor of every term); nullopt when that cannot be shown.
std::optional<int64_t> dim_div_exact(int64_t a, int64_t b);
std::optional<SymDim> dim_div_exact(const SymDim& a, const SymDim& b);

// Product of dims (element counts).
template <class D>
D dim_product(const std::vector<D>& dims, size_t begin = 0, size_t end = size_t(-1)) {
  D p = D(1);
  if (end > dims.size()) end = dims.size();
  for (size_t i = begin; i < end; ++i) p = p * dims[i];
  return p;
}

// Formats a shape "[N, 6, 6, 8]" (run time: "[4, 6, 6, 8]").
std::string shape_to_string(const std::vector<int64_t>& shape);
std::string shape_to_string(const std::vector<SymDim>& shape,
                            const std::function<std::string(int32_t)>& name);

}  // namespace sg::ops
