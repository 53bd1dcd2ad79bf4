// Everyday NumPy composites of the op library (SPEC §7), lowered here onto
// existing ops (searchsorted and cumprod, which have their own ops, are in
// sg_ordering.cc), so they need no
// kernel and differentiate through the ops they become: logaddexp, diff, flip
// (a slice with step -1), roll (slices and a concatenation), meshgrid, outer,
// isclose, allclose. einsum is in sg_einsum.cc. Eager mode (stagegraph/_everyday.py) composes the same ops in
// the same order, so both give the same bits.
#include <cmath>

#include "staging/arg_binding.h"
#include "staging/sg_ops_everyday.h"
#include "staging/sg_ops_internal.h"

namespace sg::compiler::staging {
namespace {

// ints and bools as f32 (NumPy gives f64 there; SPEC §3 gives f32).
Value as_float(Stager& s, const Value& v, SourceSpan span) {
  const Value t = tensor_of(s, v, span);
  return is_float(s.tensor_dtype(t)) ? t : s.cast(t, DType::kF32, span);
}

int64_t static_int(Stager& s, const Value& v, SourceSpan span, const std::string& what) {
  if (v.is<Staged>() || v.is_tensor()) s.fail(span, what + " must be an int known at compile time");
  return s.to_int(v, span, what);
}

// (x, y): x a tensor, y a tensor or a Python number; int and bool tensors as f32.
// A number x takes y's dtype, as beside a tensor (SPEC §3).
std::pair<Value, Value> float_operands(Stager& s, const BoundArgs& b) {
  const Value y = b[1].is_tensor() ? as_float(s, b[1], b.span(1)) : b[1];
  if (b[0].is_tensor()) return {as_float(s, b[0], b.span(0)), y};
  if (y.is_tensor()) return {s.to_tensor(b[0], s.tensor_dtype(y), b.span(0)), y};
  return {as_float(s, b[0], b.span(0)), y};
}

}  // namespace

Value slice_along(Stager& s, const Value& x, int64_t axis, std::optional<int64_t> lo, std::optional<int64_t> hi,
                  int64_t step, SourceSpan span) {
  const size_t rank = s.tensor_rank(x);
  std::vector<int64_t> begin(rank, 0), end(rank, 0), steps(rank, 1), flags(rank, 0);
  steps[size_t(axis)] = step;
  if (lo) begin[size_t(axis)] = *lo, flags[size_t(axis)] |= ops::attr::kHasBegin;
  if (hi) end[size_t(axis)] = *hi, flags[size_t(axis)] |= ops::attr::kHasEnd;
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints(begin), ops::AttrValue::Ints(end), ops::AttrValue::Ints(steps),
                  ops::AttrValue::Ints(flags)};
  return s.apply(ops::OpId::Slice, std::move(attrs), {x}, span);
}

// NumPy's: x1 == x2 gives x1 + log(2) (so -inf, -inf gives -inf); otherwise
// max + log(1 + exp(-|x1 - x2|)). Staged with `apply`, never rewritten.
Value sg_logaddexp(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x1", "x2"}, 2);
  const auto [x, y] = float_operands(s, b);
  const SourceSpan sp = a.span;
  const Value m = s.tensor_binary(ops::OpId::Maximum, x, y, sp);
  const Value d = s.apply(ops::OpId::Abs, {}, {s.tensor_binary(ops::OpId::Sub, x, y, sp)}, sp);
  const Value e = s.apply(ops::OpId::Exp, {}, {s.apply(ops::OpId::Neg, {}, {d}, sp)}, sp);
  const Value l = s.apply(ops::OpId::Log, {}, {s.tensor_binary(ops::OpId::Add, e, Value(1.0), sp)}, sp);
  const Value general = s.tensor_binary(ops::OpId::Add, m, l, sp);
  const Value equal = s.tensor_binary(ops::OpId::Add, x, Value(std::log(2.0)), sp);
  return sg_call(s, "where", {s.tensor_binary(ops::OpId::Equal, x, y, sp), equal, general}, sp);
}

namespace {

// diff's prepend/append: a tensor as given, a number or a 0-d value broadcast to x's
// shape with size 1 along the axis (NumPy's rule); numbers take x's dtype.
Value diff_edge(Stager& s, const Value& x, const Value& v, int64_t axis, SourceSpan span) {
  // A number takes the dtype it would have beside x (SPEC §3).
  const std::optional<DType> d = v.is_number() ? std::optional<DType>(dtype_beside(s.tensor_dtype(x), v)) : std::nullopt;
  const Value t = v.is_tensor() ? v : s.to_tensor(v, d, span);
  if (s.tensor_rank(t) != 0) return t;
  std::vector<Value> shape = s.to_list(s.shape_tuple(x, span), span);
  shape[size_t(axis)] = Value(int64_t(1));
  return sg_call(s, "broadcast_to", {t, make_tuple(shape)}, span);
}

}  // namespace

Value sg_diff(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "n", "axis", "prepend", "append"}, 1);
  Value x = tensor_of(s, b[0], a.span);
  const int64_t n = b.has(1) ? static_int(s, b[1], b.span(1), "diff's n") : 1;
  if (n < 0) s.fail(b.span(1), "diff: order must be non-negative but got " + std::to_string(n));
  if (s.tensor_rank(x) == 0) s.fail(a.span, "diff: needs a tensor of rank 1 or more");
  const int64_t axis = normalize_axis(s, b.get(2, Value(int64_t(-1))), s.tensor_rank(x), a.span);
  if (n == 0) return x;
  const bool pre = b.has(3) && !b[3].is<NoneV>(), post = b.has(4) && !b[4].is<NoneV>();
  if (pre || post) {
    std::vector<Value> parts;
    if (pre) parts.push_back(diff_edge(s, x, b[3], axis, b.span(3)));
    parts.push_back(x);
    if (post) parts.push_back(diff_edge(s, x, b[4], axis, b.span(4)));
    Args c;
    c.pos = {make_tuple(parts)};
    c.kw = {{"axis", Value(axis)}};
    c.span = a.span;
    x = s.call_sg("concatenate", c);
  }
  const bool boolean = s.tensor_dtype(x) == DType::kBool;
  for (int64_t k = 0; k < n; ++k) {
    const Value hi = slice_along(s, x, axis, int64_t(1), std::nullopt, 1, a.span);
    const Value lo = slice_along(s, x, axis, std::nullopt, int64_t(-1), 1, a.span);
    x = s.tensor_binary(boolean ? ops::OpId::NotEqual : ops::OpId::Sub, hi, lo, a.span);
  }
  return x;
}

Value sg_flip(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "axis"}, 1);
  Value x = tensor_of(s, b[0], a.span);
  const size_t rank = s.tensor_rank(x);
  if (rank == 0 && b.has(1)) s.fail(a.span, "flip: axis is out of range for a tensor of rank 0");
  if (rank == 0) return x;
  const std::vector<int64_t> axes = normalize_axes(s, b.get(1, Value()), rank, a.span);
  if (axes.empty()) return x;
  std::vector<int64_t> begin(rank, 0), end(rank, 0), steps(rank, 1), flags(rank, 0);
  for (int64_t ax : axes) steps[size_t(ax)] = -1;
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints(begin), ops::AttrValue::Ints(end), ops::AttrValue::Ints(steps),
                  ops::AttrValue::Ints(flags)};
  return s.apply(ops::OpId::Slice, std::move(attrs), {x}, a.span);
}

// x rolled by `shift` along `axis`: two slices and a concatenation where the size
// and the shift are known; otherwise x twice along the axis sliced at [n - k, 2n - k)
// with k = shift mod max(n, 1), reshaped to x's shape so the dim keeps its name.
// Slices, concatenation and reshape all differentiate, and move the same bits.
Value roll_axis(Stager& s, const Value& x, const Value& shift, int64_t axis, SourceSpan span) {
  auto concat = [&](const Value& a, const Value& b) {
    Args c;
    c.pos = {make_tuple({a, b})};
    c.kw = {{"axis", Value(axis)}};
    c.span = span;
    return s.call_sg("concatenate", c);
  };
  const std::optional<int64_t> n = s.tensor_type(x).shape[size_t(axis)].as_static();
  if (n && *n == 0) return x;
  if (n && shift.is<int64_t>()) {
    const int64_t k = ((shift.as<int64_t>() % *n) + *n) % *n;
    if (k == 0) return x;
    return concat(slice_along(s, x, axis, *n - k, std::nullopt, 1, span),
                  slice_along(s, x, axis, std::nullopt, *n - k, 1, span));
  }
  const Value size = s.shape_item(x, axis, span);
  const Value k = n ? s.binary(BinOp::kMod, shift, size, span)
                    : s.binary(BinOp::kMod, shift,
                               s.tensor_binary(ops::OpId::Maximum, size, Value(int64_t(1)), span), span);
  const Value start = s.binary(BinOp::kSub, size, k, span);
  const Value stop = s.binary(BinOp::kAdd, start, size, span);
  const size_t rank = s.tensor_rank(x);
  std::vector<int64_t> begin(rank, 0), end(rank, 0), steps(rank, 1), flags(rank, 0);
  flags[size_t(axis)] = ops::attr::kDynBegin | ops::attr::kDynEnd;
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints(begin), ops::AttrValue::Ints(end), ops::AttrValue::Ints(steps),
                  ops::AttrValue::Ints(flags)};
  const Value window = s.apply(ops::OpId::Slice, std::move(attrs), {concat(x, x), start, stop}, span);
  return reshape(s, window, s.shape_tuple(x, span), span);
}

namespace {

// roll's shift: an int, or an integer scalar known only at run time (as i64).
Value roll_shift(Stager& s, const Value& v, SourceSpan span) {
  if (!v.is<Staged>()) return Value(s.to_int(v, span, "roll's shift"));
  if (s.tensor_rank(v) != 0 || !is_int(s.tensor_dtype(v)))
    s.fail(span, std::string("roll's shift must be an int or an integer scalar, not a ") + dtype_name(s.tensor_dtype(v)) +
                     " tensor of rank " + std::to_string(s.tensor_rank(v)));
  return s.tensor_dtype(v) == DType::kI64 ? v : s.cast(v, DType::kI64, span);
}

std::vector<Value> items_of(Stager& s, const Value& v, SourceSpan span) {
  if (v.is<TuplePtr>() || v.is<ListPtr>()) return s.to_list(v, span);
  return {v};
}

}  // namespace

Value sg_roll(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "shift", "axis"}, 2);
  Value x = tensor_of(s, b[0], a.span);
  std::vector<Value> shifts;
  for (const Value& item : items_of(s, b[1], b.span(1))) shifts.push_back(roll_shift(s, item, b.span(1)));
  if (!b.has(2)) {
    if (shifts.size() != 1) s.fail(b.span(1), "roll: shift must be one int when axis is None");
    const Value shape = s.shape_tuple(x, a.span);
    return reshape(s, roll_axis(s, flatten(s, x, a.span), shifts[0], 0, a.span), shape, a.span);
  }
  std::vector<int64_t> raw_axes;
  for (const Value& item : items_of(s, b[2], b.span(2))) raw_axes.push_back(static_int(s, item, b.span(2), "roll's axis"));
  const size_t count = std::max(shifts.size(), raw_axes.size());
  if ((shifts.size() != 1 && shifts.size() != count) || (raw_axes.size() != 1 && raw_axes.size() != count))
    s.fail(a.span, "roll: shift and axis must have the same length (or one of them one item)");
  const size_t rank = s.tensor_rank(x);
  std::vector<Value> total(rank, Value(int64_t(0)));
  for (size_t i = 0; i < count; ++i) {
    const int64_t ax = normalize_axis(s, Value(raw_axes[raw_axes.size() == 1 ? 0 : i]), rank, b.span(2));
    total[size_t(ax)] = s.binary(BinOp::kAdd, total[size_t(ax)], shifts[shifts.size() == 1 ? 0 : i], a.span);
  }
  for (size_t ax = 0; ax < rank; ++ax)
    if (!(total[ax].is<int64_t>() && total[ax].as<int64_t>() == 0)) x = roll_axis(s, x, total[ax], int64_t(ax), a.span);
  return x;
}

Value sg_meshgrid(Stager& s, const Args& a, const std::string&) {
  std::string indexing = "xy";
  for (const auto& [k, v] : a.kw) {
    if (k != "indexing") s.fail(a.span, "meshgrid() got an unexpected keyword argument '" + k + "'");
    if (!v.is<std::string>() || (v.as<std::string>() != "xy" && v.as<std::string>() != "ij"))
      s.fail(a.span, "meshgrid: indexing must be 'xy' or 'ij'");
    indexing = v.as<std::string>();
  }
  std::vector<Value> xs;
  for (size_t i = 0; i < a.pos.size(); ++i) {
    const SourceSpan sp = i < a.pos_spans.size() ? a.pos_spans[i] : a.span;
    const Value t = tensor_of(s, a.pos[i], sp);
    xs.push_back(s.tensor_rank(t) == 1 ? t : flatten(s, t, sp));
  }
  const size_t n = xs.size();
  // Output axis of input i: i, except that 'xy' swaps the first two.
  auto position = [&](size_t i) { return indexing == "xy" && n >= 2 && i < 2 ? 1 - i : i; };
  std::vector<Value> dims(n);
  for (size_t i = 0; i < n; ++i) dims[position(i)] = s.shape_item(xs[i], 0, a.span);
  std::vector<Value> out;
  for (size_t i = 0; i < n; ++i) {
    std::vector<Value> shape(n, Value(int64_t(1)));
    shape[position(i)] = Value(int64_t(-1));
    const Value r = reshape(s, xs[i], make_tuple(shape), a.span);
    out.push_back(sg_call(s, "broadcast_to", {r, make_tuple(dims)}, a.span));
  }
  return make_tuple(out);
}

Value sg_outer(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"a", "b"}, 2);
  const Value x = reshape(s, tensor_of(s, b[0], b.span(0)), make_tuple({Value(int64_t(-1)), Value(int64_t(1))}), a.span);
  const Value y = reshape(s, tensor_of(s, b[1], b.span(1)), make_tuple({Value(int64_t(1)), Value(int64_t(-1))}), a.span);
  if (s.tensor_dtype(x) == DType::kBool && s.tensor_dtype(y) == DType::kBool)
    return s.apply(ops::OpId::LogicalAnd, {}, {x, y}, a.span);
  return s.binary(BinOp::kMul, x, y, a.span);
}

// NumPy's: (|x - y| <= atol + rtol·|y| and y finite) or x == y; with equal_nan,
// also where both are NaN. Ints and bools compare as f32.
Value isclose(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"a", "b", "rtol", "atol", "equal_nan"}, 2);
  const auto [x, y] = float_operands(s, b);
  const SourceSpan sp = a.span;
  const Value rtol = b.get(2, Value(1e-5)), atol = b.get(3, Value(1e-8));
  const bool equal_nan = b.has(4) && s.truth(b[4], b.span(4), "equal_nan");
  const Value diff = s.apply(ops::OpId::Abs, {}, {s.tensor_binary(ops::OpId::Sub, x, y, sp)}, sp);
  const Value y_t = y.is_tensor() ? y : s.to_tensor(y, s.tensor_dtype(x), sp);
  const Value tol = s.binary(BinOp::kAdd, atol, s.binary(BinOp::kMul, rtol, s.apply(ops::OpId::Abs, {}, {y_t}, sp), sp), sp);
  const Value within = s.tensor_binary(ops::OpId::LessEqual, diff, tol, sp);
  const Value finite = s.tensor_binary(ops::OpId::Equal, s.tensor_binary(ops::OpId::Sub, y_t, y_t, sp), Value(0.0), sp);
  Value r = s.apply(ops::OpId::LogicalOr, {},
                    {s.apply(ops::OpId::LogicalAnd, {}, {within, finite}, sp), s.tensor_binary(ops::OpId::Equal, x, y, sp)},
                    sp);
  if (equal_nan) {
    const Value both = s.apply(ops::OpId::LogicalAnd, {},
                               {s.apply(ops::OpId::IsNan, {}, {x}, sp), s.apply(ops::OpId::IsNan, {}, {y_t}, sp)},
                               sp);
    r = s.apply(ops::OpId::LogicalOr, {}, {r, both}, sp);
  }
  return r;
}

Value sg_isclose(Stager& s, const Args& a, const std::string& name) {
  if (name == "isclose") return isclose(s, a, name);
  return reduce(s, ops::OpId::All, isclose(s, a, name), Value(), false, a.span);
}

}  // namespace sg::compiler::staging
