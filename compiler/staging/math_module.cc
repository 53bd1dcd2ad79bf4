// Python's `math` module (SPEC §1): its constants, and its functions on static
// numbers, computed as CPython computes them (float64, the same domain and range
// errors, floor/ceil/trunc giving ints); on a staged scalar each function is the
// op, or the few ops, that compute it (a float tensor, as sg.sqrt of it).
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "staging/staged_loop.h"
#include "staging/stager.h"

namespace sg::compiler::staging {
namespace {

struct MathConstant {
  const char* name;
  double value;
};
constexpr MathConstant kMathConstants[] = {
    {"pi", 3.141592653589793},
    {"e", 2.718281828459045},
    {"tau", 6.283185307179586},
    {"inf", std::numeric_limits<double>::infinity()},
    {"nan", std::numeric_limits<double>::quiet_NaN()},
};

constexpr const char* kMathFunctions[] = {
    "sqrt", "exp", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "asin", "acos", "atan", "atan2",
    "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "floor", "ceil", "trunc", "fabs", "pow", "hypot", "degrees",
    "radians", "isnan", "isinf", "isfinite", "copysign", "fmod", "erf", "erfc", "gamma", "lgamma", "factorial", "gcd",
    "isclose"};

bool is_number(const Value& v) { return v.is<double>() || v.is<int64_t>() || v.is<bool>(); }

double number(const Value& v) {
  if (v.is<double>()) return v.as<double>();
  if (v.is<int64_t>()) return double(v.as<int64_t>());
  return v.as<bool>() ? 1.0 : 0.0;
}

// A float result as CPython checks it: NaN from non-NaN operands is a domain
// error, an infinity from finite ones a range error.
Value checked(Stager& s, SourceSpan span, double r, std::initializer_list<double> in) {
  bool any_nan = false, all_finite = true;
  for (double x : in) {
    any_nan = any_nan || std::isnan(x);
    all_finite = all_finite && std::isfinite(x);
  }
  if (std::isnan(r) && !any_nan) s.fail(span, "math domain error");
  if (std::isinf(r) && all_finite) s.fail(span, "math range error");
  return Value(r);
}

Value to_int_result(Stager& s, SourceSpan span, double r) {
  if (std::isnan(r)) s.fail(span, "cannot convert float NaN to integer");
  if (std::isinf(r)) s.fail(span, "cannot convert float infinity to integer");
  if (r >= 9.2233720368547758e18 || r < -9.2233720368547758e18) s.fail(span, "integer overflow at compile time");
  return Value(int64_t(r));
}

Value static_math(Stager& s, const std::string& fn, const std::vector<Value>& a, SourceSpan span) {
  const double x = number(a[0]);
  const double y = a.size() > 1 ? number(a[1]) : 0.0;
  if (fn == "sqrt") return checked(s, span, x < 0 ? NAN : std::sqrt(x), {x});
  if (fn == "exp") return checked(s, span, std::exp(x), {x});
  if (fn == "log") {
    if (x <= 0 || (a.size() > 1 && (y <= 0 || y == 1))) s.fail(span, "math domain error");
    return Value(a.size() > 1 ? std::log(x) / std::log(y) : std::log(x));
  }
  if (fn == "log2" || fn == "log10") {
    if (x <= 0) s.fail(span, "math domain error");
    return Value(fn == "log2" ? std::log2(x) : std::log10(x));
  }
  if (fn == "log1p") return checked(s, span, x <= -1 ? NAN : std::log1p(x), {x});
  if (fn == "expm1") return checked(s, span, std::expm1(x), {x});
  if (fn == "sin") return checked(s, span, std::sin(x), {x});
  if (fn == "cos") return checked(s, span, std::cos(x), {x});
  if (fn == "tan") return checked(s, span, std::tan(x), {x});
  if (fn == "asin") return checked(s, span, std::asin(x), {x});
  if (fn == "acos") return checked(s, span, std::acos(x), {x});
  if (fn == "atan") return Value(std::atan(x));
  if (fn == "atan2") return Value(std::atan2(x, y));
  if (fn == "sinh") return checked(s, span, std::sinh(x), {x});
  if (fn == "cosh") return checked(s, span, std::cosh(x), {x});
  if (fn == "tanh") return Value(std::tanh(x));
  if (fn == "asinh") return Value(std::asinh(x));
  if (fn == "acosh") return checked(s, span, std::acosh(x), {x});
  if (fn == "atanh") return checked(s, span, std::fabs(x) >= 1 ? NAN : std::atanh(x), {x});
  if (fn == "floor" || fn == "ceil" || fn == "trunc") {
    if (!a[0].is<double>()) return Value(int64_t(number(a[0])));
    return to_int_result(s, span, fn == "floor" ? std::floor(x) : fn == "ceil" ? std::ceil(x) : std::trunc(x));
  }
  if (fn == "fabs") return Value(std::fabs(x));
  if (fn == "pow") {
    if (x == 0 && y < 0) s.fail(span, "math domain error");
    return checked(s, span, std::pow(x, y), {x, y});
  }
  if (fn == "hypot") return Value(std::hypot(x, y));
  if (fn == "degrees") return Value(x * (180.0 / 3.141592653589793));
  if (fn == "radians") return Value(x * (3.141592653589793 / 180.0));
  if (fn == "isnan") return Value(bool(std::isnan(x)));
  if (fn == "isinf") return Value(bool(std::isinf(x)));
  if (fn == "isfinite") return Value(bool(std::isfinite(x)));
  if (fn == "copysign") return Value(std::copysign(x, y));
  if (fn == "fmod") {
    if (y == 0 || std::isinf(x)) s.fail(span, "math domain error");
    return Value(std::fmod(x, y));
  }
  if (fn == "erf") return Value(std::erf(x));
  if (fn == "erfc") return Value(std::erfc(x));
  if (fn == "gamma") {
    if (x <= 0 && x == std::floor(x)) s.fail(span, "math domain error");
    return checked(s, span, std::tgamma(x), {x});
  }
  if (fn == "lgamma") {
    if (x <= 0 && x == std::floor(x)) s.fail(span, "math domain error");
    return Value(std::lgamma(x));
  }
  s.fail(span, "math." + fn + "() is not supported");
}

// Integer functions: Python ints in, a Python int out.
Value integer_math(Stager& s, const std::string& fn, const std::vector<Value>& a, SourceSpan span) {
  for (const Value& v : a)
    if (!v.is<int64_t>() && !v.is<bool>())
      s.fail(span, "math." + fn + "() takes integers, got '" + type_name(v) + "'");
  auto as_int = [](const Value& v) { return v.is<bool>() ? int64_t(v.as<bool>()) : v.as<int64_t>(); };
  if (fn == "gcd") {
    int64_t g = 0;
    for (const Value& v : a) g = std::gcd(g, as_int(v));
    return Value(g);
  }
  const int64_t n = as_int(a[0]);  // factorial
  if (n < 0) s.fail(span, "factorial() not defined for negative values");
  int64_t r = 1;
  for (int64_t k = 2; k <= n; ++k)
    if (__builtin_mul_overflow(r, k, &r)) s.fail(span, "integer overflow at compile time: factorial(" + std::to_string(n) + ")");
  return Value(r);
}

Value isclose(Stager& s, const Args& a) {
  double rel = 1e-9, abs_tol = 0.0;
  for (const auto& [k, v] : a.kw) {
    if (!is_number(v)) s.fail(a.span, "math.isclose(): '" + k + "' must be a static number");
    if (k == "rel_tol") rel = number(v);
    else if (k == "abs_tol") abs_tol = number(v);
    else s.fail(a.span, "math.isclose() got an unexpected keyword argument '" + k + "'");
  }
  const double x = number(a.pos[0]), y = number(a.pos[1]);
  if (x == y) return Value(true);
  if (std::isinf(x) || std::isinf(y)) return Value(false);
  const double d = std::fabs(x - y);
  return Value(d <= std::fabs(rel * y) || d <= std::fabs(rel * x) || d <= abs_tol);
}

size_t arity(const std::string& fn) {
  if (fn == "atan2" || fn == "pow" || fn == "hypot" || fn == "copysign" || fn == "fmod" || fn == "isclose") return 2;
  return 1;
}

}  // namespace

bool is_math_constant(const std::string& name, double& value) {
  for (const MathConstant& c : kMathConstants)
    if (name == c.name) {
      value = c.value;
      return true;
    }
  return false;
}

bool is_math_function(const std::string& name) {
  for (const char* f : kMathFunctions)
    if (name == f) return true;
  return false;
}

Value Stager::call_math(const std::string& fn, Args& a) {
  const SourceSpan span = a.span;
  const std::string what = "math." + fn + "()";
  const size_t n = arity(fn);
  const size_t min_args = fn == "gcd" ? 0 : n;
  const size_t max_args = fn == "gcd" ? SIZE_MAX : fn == "log" ? 2 : n;
  if (a.pos.size() < min_args || a.pos.size() > max_args)
    fail(span, what + " takes " + std::to_string(n) + (fn == "log" ? " or 2" : "") + " argument" + (n == 1 ? "" : "s") +
                   ", got " + std::to_string(a.pos.size()));
  if (!a.kw.empty() && fn != "isclose") fail(span, what + " takes no keyword arguments");
  bool staged = false;
  for (size_t i = 0; i < a.pos.size(); ++i) {
    const Value& v = a.pos[i];
    const SourceSpan at = i < a.pos_spans.size() ? a.pos_spans[i] : span;
    if (v.is_tensor()) {
      if (tensor_rank(v) != 0)
        fail(at, what + " takes a number or a scalar; this is a tensor of rank " + std::to_string(tensor_rank(v)) +
                     " (use the sg op of the same name, elementwise)");
      staged = true;
    } else if (!is_number(v)) {
      fail(at, "must be real number, not " + type_name(v) + " (in " + what + ")");
    }
  }
  if (fn == "gcd" || fn == "factorial") {
    if (staged) fail(span, what + " of a value known only at run time is not supported");
    return integer_math(*this, fn, a.pos, span);
  }
  if (fn == "isclose") {
    if (staged) fail(span, "math.isclose() of a value known only at run time: use sg.isclose");
    return isclose(*this, a);
  }
  if (!staged) return static_math(*this, fn, a.pos, span);
  // The result stands for the Python float (or, from floor, ceil and trunc, the
  // int) that CPython gives: beside a tensor it takes the tensor's dtype.
  Value r = staged_math(fn, a);
  if (fn == "floor" || fn == "ceil" || fn == "trunc") loops().mark_weak(r, WeakOrigin::of_number(Value(int64_t(0))));
  else if (fn != "isnan" && fn != "isinf" && fn != "isfinite") loops().mark_weak(r, WeakOrigin::of_number(Value(0.0)));
  return r;
}

Value Stager::staged_math(const std::string& fn, const Args& a) {
  const SourceSpan span = a.span;
  const std::string what = "math." + fn + "()";

  // A staged scalar: the op (or ops) computing the function, in float32.
  auto op = [&](ops::OpId id, const Value& x) { return apply(id, {}, {x}, span); };
  auto as_float = [&](const Value& v) {
    Value t = to_tensor(v, std::nullopt, span);
    return is_float(tensor_dtype(t)) ? t : cast(t, DType::kF32, span);
  };
  const Value x = as_float(a.pos[0]);
  const Value y = a.pos.size() > 1 ? as_float(a.pos[1]) : Value();
  auto num = [](double d) { return Value(d); };
  if (fn == "sqrt") return op(ops::OpId::Sqrt, x);
  if (fn == "exp") return op(ops::OpId::Exp, x);
  if (fn == "log") {
    const Value l = op(ops::OpId::Log, x);
    return a.pos.size() > 1 ? binary(BinOp::kDiv, l, op(ops::OpId::Log, y), span) : l;
  }
  if (fn == "log2") return binary(BinOp::kMul, op(ops::OpId::Log, x), num(1.4426950408889634), span);
  if (fn == "log10") return binary(BinOp::kMul, op(ops::OpId::Log, x), num(0.4342944819032518), span);
  if (fn == "log1p") return op(ops::OpId::Log, binary(BinOp::kAdd, x, num(1.0), span));
  if (fn == "expm1") return binary(BinOp::kSub, op(ops::OpId::Exp, x), num(1.0), span);
  if (fn == "sin") return op(ops::OpId::Sin, x);
  if (fn == "cos") return op(ops::OpId::Cos, x);
  if (fn == "tan") return binary(BinOp::kDiv, op(ops::OpId::Sin, x), op(ops::OpId::Cos, x), span);
  if (fn == "tanh") return op(ops::OpId::Tanh, x);
  if (fn == "sinh" || fn == "cosh") {
    const Value ex = op(ops::OpId::Exp, x), emx = op(ops::OpId::Exp, unary(UnaryOp::kNeg, x, span));
    return binary(BinOp::kMul, binary(fn == "sinh" ? BinOp::kSub : BinOp::kAdd, ex, emx, span), num(0.5), span);
  }
  if (fn == "floor" || fn == "ceil") return cast(op(fn == "floor" ? ops::OpId::Floor : ops::OpId::Ceil, x), DType::kI64, span);
  if (fn == "trunc") return cast(x, DType::kI64, span);
  if (fn == "fabs") return op(ops::OpId::Abs, x);
  if (fn == "pow") return binary(BinOp::kPow, x, y, span);
  if (fn == "hypot")
    return op(ops::OpId::Sqrt, binary(BinOp::kAdd, binary(BinOp::kMul, x, x, span), binary(BinOp::kMul, y, y, span), span));
  if (fn == "degrees") return binary(BinOp::kMul, x, num(180.0 / 3.141592653589793), span);
  if (fn == "radians") return binary(BinOp::kMul, x, num(3.141592653589793 / 180.0), span);
  if (fn == "isnan") return op(ops::OpId::IsNan, x);
  const Value inf = num(std::numeric_limits<double>::infinity());
  if (fn == "isinf") return tensor_binary(ops::OpId::Equal, op(ops::OpId::Abs, x), inf, span);
  if (fn == "isfinite") return tensor_binary(ops::OpId::Less, op(ops::OpId::Abs, x), inf, span);
  fail(span, what + " of a value known only at run time is not supported (it has no op yet); "
                    "math.sqrt, exp, log, log2, log10, log1p, expm1, sin, cos, tan, sinh, cosh, tanh, floor, ceil, "
                    "trunc, fabs, pow, hypot, degrees, radians, isnan, isinf and isfinite are");
}

}  // namespace sg::compiler::staging
