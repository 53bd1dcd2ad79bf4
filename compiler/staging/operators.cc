// Python operators on any values: tensors (static or staged) go to the op table,
// everything else follows Python's semantics at compile time.
#include <cmath>

#include "staging/staged_loop.h"
#include "staging/stager.h"

namespace sg::compiler::staging {
namespace {

std::optional<ops::OpId> arithmetic_op(BinOp op) {
  using ops::OpId;
  switch (op) {
    case BinOp::kAdd: return OpId::Add;
    case BinOp::kSub: return OpId::Sub;
    case BinOp::kMul: return OpId::Mul;
    case BinOp::kDiv: return OpId::Div;
    case BinOp::kFloorDiv: return OpId::FloorDiv;
    case BinOp::kMod: return OpId::Mod;
    case BinOp::kPow: return OpId::Pow;
    default: return std::nullopt;
  }
}

std::optional<ops::OpId> comparison_op(CmpOp op) {
  using ops::OpId;
  switch (op) {
    case CmpOp::kLt: return OpId::Less;
    case CmpOp::kLe: return OpId::LessEqual;
    case CmpOp::kGt: return OpId::Greater;
    case CmpOp::kGe: return OpId::GreaterEqual;
    case CmpOp::kEq: return OpId::Equal;
    case CmpOp::kNe: return OpId::NotEqual;
    default: return std::nullopt;
  }
}

bool is_int_like(const Value& v) { return v.is<int64_t>() || v.is<bool>(); }
int64_t int_of(const Value& v) { return v.is<bool>() ? int64_t(v.as<bool>()) : v.as<int64_t>(); }
double float_of(const Value& v) { return v.is<double>() ? v.as<double>() : double(int_of(v)); }

const std::vector<Value>* sequence_items(const Value& v) {
  if (v.is<TuplePtr>()) return v.as<TuplePtr>().get();
  if (v.is<ListPtr>()) return &v.as<ListPtr>()->items;
  return nullptr;
}

}  // namespace

Value Stager::binary(BinOp op, const Value& a, const Value& b, SourceSpan span) {
  if (!a.is_tensor() && !b.is_tensor()) return python_binary(op, a, b, span);
  const std::string sym = bin_op_symbol(op);
  if (op == BinOp::kMatMul) {
    if (!a.is_tensor() || !b.is_tensor()) fail(span, "operands of @ must be tensors, got " + type_name(a) + " and " + type_name(b));
    const DType da = tensor_dtype(a), db = tensor_dtype(b);
    if (da != db)
      fail(span, std::string("matmul: operands have different dtypes ") + dtype_name(da) + " and " + dtype_name(db) +
                     "; cast one with astype", provenance_notes({a, b}));
    return apply(ops::OpId::MatMul, {}, {a, b}, span);
  }
  if (auto id = arithmetic_op(op)) return tensor_binary(*id, a, b, span);
  if (op == BinOp::kBitAnd || op == BinOp::kBitOr || op == BinOp::kBitXor) {
    auto is_bool = [&](const Value& v) { return v.is<bool>() || (v.is_tensor() && tensor_dtype(v) == DType::kBool); };
    if (!is_bool(a) || !is_bool(b))
      fail(span, "operator " + sym + " is supported on bool tensors only; use comparisons and sg.logical_and/or");
    const ops::OpId id = op == BinOp::kBitAnd ? ops::OpId::LogicalAnd
                         : op == BinOp::kBitOr ? ops::OpId::LogicalOr
                                               : ops::OpId::NotEqual;
    return tensor_binary(id, a, b, span);
  }
  fail(span, "operator " + sym + " is not supported on tensors");
}

Value Stager::compare(CmpOp op, const Value& a, const Value& b, SourceSpan span) {
  if (op == CmpOp::kIs || op == CmpOp::kIsNot) {
    bool same;
    if (a.is_tensor() || b.is_tensor()) {
      same = a.is<Staged>() && b.is<Staged>() ? a.as<Staged>().fn == b.as<Staged>().fn && a.as<Staged>().id == b.as<Staged>().id
             : a.is<StaticTensorPtr>() && b.is<StaticTensorPtr>() ? a.as<StaticTensorPtr>() == b.as<StaticTensorPtr>()
                                                                    : false;
    } else if (a.is<NoneV>() || b.is<NoneV>() || a.is<bool>() || b.is<bool>()) {
      same = a.data.index() == b.data.index() && static_equal(a, b).value_or(false);
    } else {
      same = static_equal(a, b).value_or(false);
    }
    return Value(op == CmpOp::kIs ? same : !same);
  }
  if (op == CmpOp::kIn || op == CmpOp::kNotIn) {
    bool found = false;
    if (b.is<std::string>() && a.is<std::string>()) {
      found = b.as<std::string>().find(a.as<std::string>()) != std::string::npos;
    } else if (b.is<DictPtr>()) {
      for (const auto& [k, v] : b.as<DictPtr>()->items) found = found || static_equal(k, a).value_or(false);
    } else if (b.is<RangeV>() && is_int_like(a)) {
      const RangeV& r = b.as<RangeV>();
      const int64_t x = int_of(a);
      found = r.step > 0 ? (x >= r.start && x < r.stop) : (x <= r.start && x > r.stop);
      found = found && (x - r.start) % r.step == 0;
    } else if (const std::vector<Value>* items = sequence_items(b)) {
      for (const Value& item : *items) {
        std::optional<bool> e = static_equal(item, a);
        if (!e) fail(span, "`in` with a tensor operand is not supported; compare the tensors with ==");
        found = found || *e;
      }
    } else {
      fail(span, "`in` needs a tuple, list, dict, range or str on its right, got " + type_name(b));
    }
    return Value(op == CmpOp::kIn ? found : !found);
  }
  if (a.is_tensor() || b.is_tensor()) return tensor_binary(*comparison_op(op), a, b, span);

  if (op == CmpOp::kEq || op == CmpOp::kNe) {
    std::optional<bool> e = static_equal(a, b);
    const bool eq = e.value_or(false);
    return Value(op == CmpOp::kEq ? eq : !eq);
  }
  // Ordering: numbers, strings, sequences (lexicographic).
  int c = 0;
  if (a.is_number() && b.is_number()) {
    if (a.is<double>() || b.is<double>()) {
      const double x = float_of(a), y = float_of(b);
      if (std::isnan(x) || std::isnan(y)) return Value(false);
      c = x < y ? -1 : x > y ? 1 : 0;
    } else {
      c = int_of(a) < int_of(b) ? -1 : int_of(a) > int_of(b) ? 1 : 0;
    }
  } else if (a.is<std::string>() && b.is<std::string>()) {
    c = a.as<std::string>().compare(b.as<std::string>());
    c = c < 0 ? -1 : c > 0 ? 1 : 0;
  } else if (sequence_items(a) && sequence_items(b) && a.data.index() == b.data.index()) {
    const auto& x = *sequence_items(a);
    const auto& y = *sequence_items(b);
    size_t i = 0;
    while (i < x.size() && i < y.size() && static_equal(x[i], y[i]).value_or(false)) ++i;
    if (i < x.size() && i < y.size()) {
      const bool lt = compare(CmpOp::kLt, x[i], y[i], span).as<bool>();
      c = lt ? -1 : 1;
    } else {
      c = x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
    }
  } else {
    fail(span, std::string("'") + cmp_op_symbol(op) + "' is not supported between " + type_name(a) + " and " +
                   type_name(b));
  }
  switch (op) {
    case CmpOp::kLt: return Value(c < 0);
    case CmpOp::kLe: return Value(c <= 0);
    case CmpOp::kGt: return Value(c > 0);
    default: return Value(c >= 0);
  }
}

Value Stager::unary(UnaryOp op, const Value& a, SourceSpan span) {
  if (a.is_tensor()) {
    const DType dt = tensor_dtype(a);
    switch (op) {
      case UnaryOp::kPos: return a;
      case UnaryOp::kNeg:
        if (dt == DType::kBool) fail(span, "unary - is not supported on bool tensors; use ~ or sg.logical_not");
        {
          Value r = apply(ops::OpId::Neg, {}, {a}, span);
          if (const WeakOrigin* w = weak_origin(a)) loops().mark_weak(r, *w);  // -i is a Python int too
          return r;
        }
      case UnaryOp::kInvert:
        if (dt != DType::kBool) fail(span, "~ is supported on bool tensors only");
        return apply(ops::OpId::LogicalNot, {}, {a}, span);
      case UnaryOp::kNot:
        if (a.is<StaticTensorPtr>()) return Value(!truth(a, span, "`not`"));
        if (tensor_rank(a) != 0)
          fail(span, "`not` of a " + module_->format_type(tensor_type(a)) +
                         " tensor is ambiguous; use sg.any or sg.all, or ~ elementwise");
        {
          Value b = dt == DType::kBool ? a : tensor_binary(ops::OpId::NotEqual, a, Value(int64_t(0)), span);
          return apply(ops::OpId::LogicalNot, {}, {b}, span);
        }
    }
  }
  if (op == UnaryOp::kNot) return Value(!truth(a, span, "`not`"));
  if (!a.is_number()) fail(span, "bad operand type for unary operator: " + type_name(a));
  switch (op) {
    case UnaryOp::kNeg:
      if (a.is<double>()) return Value(-a.as<double>());
      if (int_of(a) == INT64_MIN) fail(span, "integer overflow at compile time");
      return Value(-int_of(a));
    case UnaryOp::kPos: return a.is<bool>() ? Value(int_of(a)) : a;
    case UnaryOp::kInvert:
      if (a.is<double>()) fail(span, "bad operand type for ~: float");
      return Value(~int_of(a));
    case UnaryOp::kNot: break;
  }
  return a;
}

Value Stager::python_binary(BinOp op, const Value& a, const Value& b, SourceSpan span) {
  const std::string sym = bin_op_symbol(op);
  if (a.is_number() && b.is_number()) {
    const bool both_bool = a.is<bool>() && b.is<bool>();
    if (both_bool && (op == BinOp::kBitAnd || op == BinOp::kBitOr || op == BinOp::kBitXor)) {
      const bool x = a.as<bool>(), y = b.as<bool>();
      return Value(op == BinOp::kBitAnd ? (x && y) : op == BinOp::kBitOr ? (x || y) : (x != y));
    }
    if (op == BinOp::kDiv || a.is<double>() || b.is<double>()) {
      if (op == BinOp::kMatMul || op >= BinOp::kBitAnd) fail(span, "unsupported operand types for " + sym + ": float");
      const double x = float_of(a), y = float_of(b);
      switch (op) {
        case BinOp::kAdd: return Value(x + y);
        case BinOp::kSub: return Value(x - y);
        case BinOp::kMul: return Value(x * y);
        case BinOp::kPow: return Value(std::pow(x, y));
        default: break;
      }
      if (y == 0) fail(span, "division by zero at compile time");
      if (op == BinOp::kDiv) return Value(x / y);
      double r = std::fmod(x, y);
      if (r != 0 && ((r < 0) != (y < 0))) r += y;
      if (op == BinOp::kMod) return Value(r);
      return Value(std::round((x - r) / y));  // floor division
    }
    const int64_t x = int_of(a), y = int_of(b);
    int64_t r = 0;
    auto overflow = [&]() { fail(span, "integer overflow at compile time (" + std::to_string(x) + " " + sym + " " + std::to_string(y) + ")"); };
    switch (op) {
      case BinOp::kAdd: if (__builtin_add_overflow(x, y, &r)) overflow(); return Value(r);
      case BinOp::kSub: if (__builtin_sub_overflow(x, y, &r)) overflow(); return Value(r);
      case BinOp::kMul: if (__builtin_mul_overflow(x, y, &r)) overflow(); return Value(r);
      case BinOp::kFloorDiv:
      case BinOp::kMod: {
        if (y == 0) fail(span, "integer division or modulo by zero at compile time");
        if (x == INT64_MIN && y == -1) overflow();
        int64_t q = x / y, m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) { --q; m += y; }
        return Value(op == BinOp::kFloorDiv ? q : m);
      }
      case BinOp::kPow: {
        if (y < 0) return Value(std::pow(double(x), double(y)));
        int64_t p = 1;
        for (int64_t i = 0; i < y; ++i) {
          if (__builtin_mul_overflow(p, x, &p)) overflow();
          if (p == 0 || p == 1) break;
        }
        if (p == 1 && x == -1 && (y % 2)) p = -1;
        return Value(p);
      }
      case BinOp::kBitAnd: return Value(x & y);
      case BinOp::kBitOr: return Value(x | y);
      case BinOp::kBitXor: return Value(x ^ y);
      case BinOp::kLShift:
        if (y < 0 || y >= 63) fail(span, "shift count out of range at compile time");
        return Value(int64_t(uint64_t(x) << y));
      case BinOp::kRShift:
        if (y < 0) fail(span, "negative shift count");
        return Value(y >= 63 ? (x < 0 ? int64_t(-1) : int64_t(0)) : (x >> y));
      default: fail(span, "unsupported operand types for " + sym + ": int and int");
    }
  }
  auto repeat = [&](const std::vector<Value>& items, const Value& n) {
    std::vector<Value> out;
    const int64_t k = int_of(n);
    if (k > 0 && int64_t(items.size()) * k > 10000000) fail(span, "sequence too large at compile time");
    for (int64_t i = 0; i < k; ++i) out.insert(out.end(), items.begin(), items.end());
    return out;
  };
  if (op == BinOp::kAdd) {
    if (a.is<std::string>() && b.is<std::string>()) return Value(a.as<std::string>() + b.as<std::string>());
    if (a.is<TuplePtr>() && b.is<TuplePtr>()) {
      std::vector<Value> items = *a.as<TuplePtr>();
      items.insert(items.end(), b.as<TuplePtr>()->begin(), b.as<TuplePtr>()->end());
      return make_tuple(std::move(items));
    }
    if (a.is<ListPtr>() && b.is<ListPtr>()) {
      std::vector<Value> items = a.as<ListPtr>()->items;
      items.insert(items.end(), b.as<ListPtr>()->items.begin(), b.as<ListPtr>()->items.end());
      return make_list(std::move(items));
    }
  }
  if (op == BinOp::kMul) {
    const Value& seq = is_int_like(a) ? b : a;
    const Value& n = is_int_like(a) ? a : b;
    if (is_int_like(n)) {
      if (seq.is<TuplePtr>()) return make_tuple(repeat(*seq.as<TuplePtr>(), n));
      if (seq.is<ListPtr>()) return make_list(repeat(seq.as<ListPtr>()->items, n));
      if (seq.is<std::string>()) {
        std::string out;
        for (const Value& c : repeat({seq}, n)) out += c.as<std::string>();
        return Value(out);
      }
    }
  }
  if (op == BinOp::kMod && a.is<std::string>()) fail(span, "%-formatting of strings is not supported");
  fail(span, "unsupported operand types for " + sym + ": " + type_name(a) + " and " + type_name(b));
}

}  // namespace sg::compiler::staging
