#include "ops/dim.h"

#include <algorithm>
#include <numeric>

namespace sg::ops {

SymDim SymDim::symbol(int32_t id) {
  SymDim d;
  d.terms_.push_back(Term{1, {id}});
  return d;
}

std::optional<int32_t> SymDim::as_symbol() const {
  if (constant_ != 0 || terms_.size() != 1) return std::nullopt;
  const Term& t = terms_[0];
  if (t.coef != 1 || t.symbols.size() != 1) return std::nullopt;
  return t.symbols[0];
}

// Keeps the representation canonical so that operator== is polynomial equality.
void SymDim::normalize() {
  std::sort(terms_.begin(), terms_.end(),
            [](const Term& a, const Term& b) { return a.symbols < b.symbols; });
  std::vector<Term> merged;
  merged.reserve(terms_.size());
  for (Term& t : terms_) {
    if (!merged.empty() && merged.back().symbols == t.symbols) {
      merged.back().coef += t.coef;
    } else {
      merged.push_back(std::move(t));
    }
  }
  std::erase_if(merged, [](const Term& t) { return t.coef == 0; });
  terms_ = std::move(merged);
}

SymDim operator+(const SymDim& a, const SymDim& b) {
  SymDim r;
  r.constant_ = a.constant_ + b.constant_;
  r.terms_ = a.terms_;
  r.terms_.insert(r.terms_.end(), b.terms_.begin(), b.terms_.end());
  r.normalize();
  return r;
}

SymDim operator-(const SymDim& a, const SymDim& b) {
  SymDim r;
  r.constant_ = a.constant_ - b.constant_;
  r.terms_ = a.terms_;
  for (const SymDim::Term& t : b.terms_) r.terms_.push_back(SymDim::Term{-t.coef, t.symbols});
  r.normalize();
  return r;
}

SymDim operator*(const SymDim& a, const SymDim& b) {
  SymDim r;
  r.constant_ = a.constant_ * b.constant_;
  for (const SymDim::Term& t : a.terms_) r.terms_.push_back(SymDim::Term{t.coef * b.constant_, t.symbols});
  for (const SymDim::Term& t : b.terms_) r.terms_.push_back(SymDim::Term{t.coef * a.constant_, t.symbols});
  for (const SymDim::Term& ta : a.terms_) {
    for (const SymDim::Term& tb : b.terms_) {
      SymDim::Term t{ta.coef * tb.coef, ta.symbols};
      t.symbols.insert(t.symbols.end(), tb.symbols.begin(), tb.symbols.end());
      std::sort(t.symbols.begin(), t.symbols.end());
      r.terms_.push_back(std::move(t));
    }
  }
  r.normalize();
  return r;
}

// Terms in canonical order, each "A*B*coef" (coefficient last, omitted when 1),
// then the constant: "N*2", "N*M+3", "N-1", "-N+4". The form is stable and easy
// to parse back: the graph file stores polynomial dims by this text.
std::string SymDim::to_string(const std::function<std::string(int32_t)>& name) const {
  if (terms_.empty()) return std::to_string(constant_);
  std::string s;
  for (const Term& t : terms_) {
    if (t.coef < 0) {
      s += '-';
    } else if (!s.empty()) {
      s += '+';
    }
    for (size_t i = 0; i < t.symbols.size(); ++i) {
      if (i > 0) s += '*';
      s += name(t.symbols[i]);
    }
    const int64_t mag = t.coef < 0 ? -t.coef : t.coef;
    if (mag != 1) s += "*" + std::to_string(mag);
  }
  if (constant_ > 0) s += "+" + std::to_string(constant_);
  if (constant_ < 0) s += std::to_string(constant_);
  return s;
}

Tri dim_equal(const SymDim& a, const SymDim& b) {
  if (a == b) return Tri::kYes;
  // Normalized polynomials that differ only in their constants can never be equal.
  if ((a - b).is_static()) return Tri::kNo;
  return Tri::kUnknown;
}

bool dim_equal_only_when_empty(const SymDim& a, const SymDim& b) {
  if (a.is_static() || b.is_static() || a == b) return false;
  // With a negative coefficient the common factor can vanish for a real binding
  // (3*(N-M) and N-M at N == M).
  for (const SymDim* d : {&a, &b}) {
    if (d->constant() < 0) return false;
    for (const SymDim::Term& t : d->terms())
      if (t.coef < 0) return false;
  }
  // a == ka*p and b == kb*p exactly when a*kb == b*ka, ka and kb read off the
  // leading terms (normalized order, so both lead with p's leading monomial).
  const SymDim::Term& la = a.terms()[0];
  const SymDim::Term& lb = b.terms()[0];
  if (la.symbols != lb.symbols) return false;
  return a * SymDim(lb.coef) == b * SymDim(la.coef);
}

bool dim_never_equal(const SymDim& a, const SymDim& b) {
  const SymDim d = a - b;
  const int64_t k = d.constant();
  if (d.is_static()) return k != 0;
  // Magnitudes as unsigned: the gcd of coefficients near INT64_MIN must not overflow.
  uint64_t g = 0;
  bool all_positive = true;
  bool all_negative = true;
  for (const SymDim::Term& t : d.terms()) {
    const uint64_t mag = t.coef < 0 ? uint64_t(0) - uint64_t(t.coef) : uint64_t(t.coef);
    g = std::gcd(g, mag);
    all_positive = all_positive && t.coef > 0;
    all_negative = all_negative && t.coef < 0;
  }
  const uint64_t k_mag = k < 0 ? uint64_t(0) - uint64_t(k) : uint64_t(k);
  if (k_mag % g != 0) return true;  // sum c_i*m_i is a multiple of g, -k is not
  // Every monomial is >= 0, so the sum has the coefficients' sign or is 0.
  return (all_positive && k > 0) || (all_negative && k < 0);
}

std::optional<int64_t> dim_div_exact(int64_t a, int64_t b) {
  if (b == 0 || a % b != 0) return std::nullopt;
  return a / b;
}

namespace {

// `sub` as a sub-multiset of the sorted list `all`: the rest, or nullopt.
std::optional<std::vector<int32_t>> remove_factor(const std::vector<int32_t>& all,
                                                  const std::vector<int32_t>& sub) {
  std::vector<int32_t> rest;
  size_t j = 0;
  for (int32_t s : all) {
    if (j < sub.size() && sub[j] == s) {
      ++j;
    } else {
      rest.push_back(s);
    }
  }
  if (j != sub.size()) return std::nullopt;
  return rest;
}

// a / (coef * symbols): every term of `a` must hold the monomial.
std::optional<SymDim> div_by_monomial(const SymDim& a, int64_t coef, const std::vector<int32_t>& symbols) {
  if (coef == 0) return std::nullopt;
  if (!symbols.empty() && a.constant() != 0) return std::nullopt;
  if (a.constant() % coef != 0) return std::nullopt;
  SymDim q(symbols.empty() ? a.constant() / coef : 0);
  for (const SymDim::Term& t : a.terms()) {
    if (t.coef % coef != 0) return std::nullopt;
    std::optional<std::vector<int32_t>> rest = remove_factor(t.symbols, symbols);
    if (!rest) return std::nullopt;
    SymDim term(t.coef / coef);
    for (int32_t s : *rest) term = term * SymDim::symbol(s);
    q = q + term;
  }
  return q;
}

}  // namespace

std::optional<SymDim> dim_div_exact(const SymDim& a, const SymDim& b) {
  if (b.is_static()) return div_by_monomial(a, b.constant(), {});
  if (b.constant() == 0 && b.terms().size() == 1) {
    return div_by_monomial(a, b.terms()[0].coef, b.terms()[0].symbols);
  }
  // A general polynomial divisor: only a static multiple of it is recognized
  // ((N+1)*4 / (N+1)), which is what shape arithmetic produces.
  const SymDim::Term& lead = b.terms()[0];
  std::optional<SymDim> q;
  for (const SymDim::Term& t : a.terms()) {
    if (t.symbols == lead.symbols && t.coef % lead.coef == 0) q = SymDim(t.coef / lead.coef);
  }
  if (q && *q * b == a) return q;
  return std::nullopt;
}

std::string shape_to_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::string shape_to_string(const std::vector<SymDim>& shape,
                            const std::function<std::string(int32_t)>& name) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += shape[i].to_string(name);
  }
  return s + "]";
}

}  // namespace sg::ops
