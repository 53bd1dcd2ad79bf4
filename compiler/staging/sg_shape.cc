// The shape family of the op library (SPEC §7): reshape, transpose, expand_dims,
// squeeze, concatenate, stack, broadcast_to, tile, pad and split. Dtype and shape checks are the op table's
// rules, run by Stager::apply; here arguments are read NumPy's way.
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "staging/arg_binding.h"
#include "staging/sg_ops_internal.h"

namespace sg::compiler::staging {
namespace {

// x[..., lo:hi, ...] along `axis`; lo and hi are None, ints or staged int scalars.
Value slice_axis(Stager& s, const Value& x, int64_t axis, const Value& lo, const Value& hi, SourceSpan span) {
  const size_t rank = s.tensor_rank(x);
  std::vector<int64_t> begin(rank, 0), end(rank, 0), step(rank, 1), flags(rank, 0);
  std::vector<Value> inputs{x};
  auto bound = [&](const Value& v, int64_t& slot, int64_t has_flag, int64_t dyn_flag) {
    if (v.is<NoneV>()) return;
    if (v.is<Staged>()) {
      flags[size_t(axis)] |= dyn_flag;
      inputs.push_back(v);
    } else {
      slot = s.to_int(v, span, "a split index");
      flags[size_t(axis)] |= has_flag;
    }
  };
  bound(lo, begin[size_t(axis)], ops::attr::kHasBegin, ops::attr::kDynBegin);
  bound(hi, end[size_t(axis)], ops::attr::kHasEnd, ops::attr::kDynEnd);
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints(begin), ops::AttrValue::Ints(end), ops::AttrValue::Ints(step),
                  ops::AttrValue::Ints(flags)};
  return s.apply(ops::OpId::Slice, std::move(attrs), std::move(inputs), span);
}

}  // namespace

Value sg_tile(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "reps"}, 2);
  std::vector<int64_t> reps;
  if (b[1].is<TuplePtr>() || b[1].is<ListPtr>()) {
    for (const Value& r : s.to_list(b[1], a.span)) reps.push_back(non_negative(s, r, a.span, "a tile repetition"));
  } else {
    reps.push_back(non_negative(s, b[1], a.span, "a tile repetition"));
  }
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints(reps)};
  return s.apply(ops::OpId::Tile, std::move(attrs), {s.to_tensor(b[0], std::nullopt, a.span)}, a.span);
}

Value sg_pad(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "pad_width", "constant_values"}, 2);
  Value x = s.to_tensor(b[0], std::nullopt, a.span);
  const size_t rank = s.tensor_rank(x);
  const DType dt = s.tensor_dtype(x);
  // NumPy's forms: n, (n,), (before, after), or one (before, after) per axis.
  std::vector<int64_t> pair;
  std::vector<int64_t> widths;
  const Value& pw = b[1];
  if (pw.is<TuplePtr>() || pw.is<ListPtr>()) {
    std::vector<Value> items = s.to_list(pw, a.span);
    const bool nested = !items.empty() && (items[0].is<TuplePtr>() || items[0].is<ListPtr>());
    if (nested) {
      if (items.size() != rank && items.size() != 1)
        s.fail(a.span, "pad: pad_width has " + std::to_string(items.size()) + " pairs for a tensor of rank " +
                           std::to_string(rank));
      for (const Value& it : items) {
        std::vector<Value> p = s.to_list(it, a.span);
        if (p.size() == 1) p.push_back(p[0]);
        if (p.size() != 2) s.fail(a.span, "pad: each entry of pad_width must be (before, after)");
        for (const Value& w : p) widths.push_back(non_negative(s, w, a.span, "a pad width"));
      }
      if (items.size() == 1) pair = widths;
    } else if (items.size() == 1 || items.size() == 2) {
      for (const Value& w : items) pair.push_back(non_negative(s, w, a.span, "a pad width"));
      if (pair.size() == 1) pair.push_back(pair[0]);
    } else {
      s.fail(a.span, "pad: pad_width must be an int, (before, after) or one (before, after) per axis");
    }
  } else {
    const int64_t w = non_negative(s, pw, a.span, "a pad width");
    pair = {w, w};
  }
  if (!pair.empty()) {
    widths.clear();
    for (size_t i = 0; i < rank; ++i) widths.insert(widths.end(), pair.begin(), pair.end());
  }
  // Without constant_values NumPy pads with the dtype's zero (False for bool).
  const Value fill = b.has(2) ? b[2] : dt == DType::kBool ? Value(false) : Value(int64_t(0));
  if (fill.is_tensor()) {
    // A padding value known at run time: pad with zeros, then put the value where
    // a padded zero tensor is 1.
    if (s.tensor_rank(fill) != 0)
      s.fail(a.span, "pad: constant_values must be a scalar, got a " + s.module().format_type(s.tensor_type(fill)) +
                         " tensor");
    Value v = fill;
    if (s.tensor_dtype(v) != dt) {
      const WeakOrigin* w = s.weak_origin(v);
      if (!w || !Stager::number_fits(w->number, dt))
        s.fail(a.span, std::string("pad: a ") + dtype_name(s.tensor_dtype(v)) + " padding value for a " +
                           dtype_name(dt) + " tensor; cast with astype");
      v = s.cast(v, dt, a.span);
    }
    ops::Attrs zero_attrs;
    zero_attrs.values = {ops::AttrValue::Ints(widths), ops::AttrValue::Float(0), ops::AttrValue::String("constant")};
    const Value padded = s.apply(ops::OpId::Pad, zero_attrs, {x}, a.span);
    Args z;
    z.span = a.span;
    z.pos = {x};
    ops::Attrs one_attrs;
    one_attrs.values = {ops::AttrValue::Ints(widths), ops::AttrValue::Float(1), ops::AttrValue::String("constant")};
    const Value border = s.apply(ops::OpId::Pad, std::move(one_attrs), {s.call_sg("zeros_like", z)}, a.span);
    const Value is_border = s.tensor_binary(ops::OpId::NotEqual, border, Value(int64_t(0)), a.span);
    return s.apply(ops::OpId::Where, {}, {is_border, v, padded}, a.span);
  }
  double value = 0;
  if (fill.is<double>()) {
    if (!is_float(dt)) s.fail(a.span, std::string("pad: a float padding value for a ") + dtype_name(dt) + " tensor; cast with astype");
    value = fill.as<double>();
  } else if (fill.is<int64_t>()) {
    if (dt == DType::kBool) s.fail(a.span, "pad: an int padding value for a bool tensor; cast with astype");
    value = double(fill.as<int64_t>());
  } else if (fill.is<bool>()) {
    value = fill.as<bool>() ? 1 : 0;
  } else {
    s.fail(a.span, "pad: constant_values must be a Python number, got " + type_name(fill));
  }
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints(widths), ops::AttrValue::Float(value), ops::AttrValue::String("constant")};
  return s.apply(ops::OpId::Pad, std::move(attrs), {x}, a.span);
}

Value sg_split(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "indices_or_sections", "axis"}, 2);
  Value x = s.to_tensor(b[0], std::nullopt, a.span);
  if (s.tensor_rank(x) == 0) s.fail(a.span, "split: needs a tensor of rank 1 or more");
  const int64_t axis = normalize_axis(s, b.get(2, Value(int64_t(0))), s.tensor_rank(x), a.span);
  std::vector<Value> bounds{Value()};  // the parts are [bounds[i], bounds[i + 1])
  const Value& spec = b[1];
  if (spec.is<TuplePtr>() || spec.is<ListPtr>()) {
    for (const Value& i : s.to_list(spec, a.span)) {
      if (i.is<Staged>()) s.fail(a.span, "split: the split indices must be known at compile time");
      bounds.push_back(Value(s.to_int(i, a.span, "a split index")));
    }
  } else {
    const int64_t n = non_negative(s, spec, a.span, "the number of sections");
    if (n == 0) s.fail(a.span, "split: the number of sections must be larger than 0");
    const ir::Dim dim = s.tensor_type(x).shape[size_t(axis)];  // a copy: tensor_type returns a temporary
    if (std::optional<int64_t> size = dim.as_static()) {
      if (*size % n != 0)
        s.fail(a.span, "split: array split does not result in an equal division: " + std::to_string(*size) +
                           " elements along axis " + std::to_string(axis) + " into " + std::to_string(n) +
                           " sections", s.provenance_notes({x}));
      for (int64_t i = 1; i < n; ++i) bounds.push_back(Value(i * (*size / n)));
    } else {
      // The section size is known at run time only: bounds are staged multiples of
      // it, and an Assert in program order checks that the dim divides evenly.
      const Value length = s.shape_item(x, axis, a.span);
      s.assert_at_run_time(
          s.tensor_binary(ops::OpId::Equal, s.binary(BinOp::kMod, length, Value(n), a.span), Value(int64_t(0)), a.span),
          "split: array split does not result in an equal division: axis " + std::to_string(axis) + " into " +
              std::to_string(n) + " sections",
          a.span);
      Value part = s.binary(BinOp::kFloorDiv, length, Value(n), a.span);
      for (int64_t i = 1; i < n; ++i) bounds.push_back(s.binary(BinOp::kMul, part, Value(i), a.span));
    }
  }
  bounds.push_back(Value());
  std::vector<Value> parts;
  for (size_t i = 0; i + 1 < bounds.size(); ++i) parts.push_back(slice_axis(s, x, axis, bounds[i], bounds[i + 1], a.span));
  return make_list(std::move(parts));
}

Value sg_reshape(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "shape"}, 2);
  return reshape(s, b[0], b[1], a.span);
}

Value sg_transpose(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "axes"}, 1);
  return transpose(s, s.to_tensor(b[0], std::nullopt, a.span), b.get(1, Value()), a.span);
}

Value sg_expand_squeeze(Stager& s, const Args& a, const std::string& name) {
  const bool expand = name == "expand_dims";
  BoundArgs b(s, a, name, {"x", "axis"}, expand ? 2 : 1);
  Value x = s.to_tensor(b[0], std::nullopt, a.span);
  const ir::Type t = s.tensor_type(x);
  std::vector<int64_t> axes;
  if (expand) {
    if (b.none(1)) s.fail(a.span, "expand_dims: axis must be an int or a tuple of ints, got None");
    const size_t n = b[1].is<TuplePtr>() || b[1].is<ListPtr>() ? s.to_list(b[1], a.span).size() : 1;
    axes = normalize_axes(s, b[1], t.rank() + n, a.span);
  } else if (b.has(1)) {
    axes = normalize_axes(s, b[1], t.rank(), a.span);
  } else {
    for (size_t i = 0; i < t.rank(); ++i)
      if (t.shape[i].as_static() == std::optional<int64_t>(1)) axes.push_back(int64_t(i));
  }
  if (axes.empty()) return x;
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints(axes)};
  return s.apply(expand ? ops::OpId::ExpandDims : ops::OpId::Squeeze, std::move(attrs), {x}, a.span);
}

Value sg_concat_stack(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"arrays", "axis"}, 1);
  if (b[0].is<TensorListV>()) return s.tensor_list_join(b[0].as<TensorListV>(), name, b.get(1, Value(int64_t(0))), a.span);
  std::vector<Value> xs = s.to_list(b[0], a.span);
  if (xs.empty()) s.fail(a.span, name + ": needs at least one tensor");
  // Lists of Python numbers (or scalars of the tensors' dtype) among tensors
  // (`sg.concatenate((v, [i]))`) become tensors of the tensors' dtype, as a number
  // beside a tensor does (SPEC §3).
  std::optional<DType> like;
  for (const Value& x : xs)
    if (x.is_tensor() && !like) like = s.tensor_dtype(x);
  std::function<std::optional<Value>(const Value&)> numbers = [&](const Value& v) -> std::optional<Value> {
    if (v.is_tensor() && s.tensor_rank(v) == 0 && !s.weak_origin(v) && s.tensor_dtype(v) == *like) return v;
    if (v.is_number() || (v.is_tensor() && s.tensor_rank(v) == 0 && s.weak_origin(v))) {
      if (v.is_number() && !Stager::number_fits(v, *like)) return std::nullopt;
      return s.to_tensor(v.is_number() ? v : s.cast(v, *like, a.span), *like, a.span);
    }
    if (!v.is<ListPtr>() && !v.is<TuplePtr>()) return std::nullopt;
    std::vector<Value> items;
    for (const Value& item : s.to_list(v, a.span)) {
      std::optional<Value> t = numbers(item);
      if (!t) return std::nullopt;
      items.push_back(std::move(*t));
    }
    if (items.empty()) return std::nullopt;
    Args st;
    st.span = a.span;
    st.pos = {make_list(std::move(items))};
    return s.call_sg("stack", st);
  };
  if (like)
    for (Value& x : xs)
      if (x.is<ListPtr>() || x.is<TuplePtr>())
        if (std::optional<Value> t = numbers(x)) x = *t;
  xs = unify_dtypes(s, std::move(xs), name, a.span);
  const bool stack = name == "stack";
  if (b.none(1)) {
    if (stack) s.fail(a.span, "stack: axis must be an int, got None");
    // NumPy: concatenate(axis=None) joins the flattened tensors.
    for (Value& x : xs) x = flatten(s, x, a.span);
  }
  const size_t rank = s.tensor_rank(xs[0]);
  const int64_t axis = normalize_axis(s, b.get(1, Value(int64_t(0))), stack ? rank + 1 : rank, a.span);
  if (stack) {
    for (Value& x : xs) {
      if (s.tensor_rank(x) != rank)
        s.fail(a.span, "stack: all tensors must have the same rank", s.provenance_notes(xs));
      ops::Attrs attrs;
      attrs.values = {ops::AttrValue::Ints({axis})};
      x = s.apply(ops::OpId::ExpandDims, std::move(attrs), {x}, a.span);
    }
  }
  if (xs.size() == 1) return xs[0];
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Int(axis)};
  return s.apply(ops::OpId::Concatenate, std::move(attrs), xs, a.span);
}

Value sg_broadcast_to(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "shape"}, 2);
  ShapeArg shape = s.shape_arg(b[1], a.span, false);
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints(shape.dims)};
  std::vector<Value> inputs{s.to_tensor(b[0], std::nullopt, a.span)};
  inputs.insert(inputs.end(), shape.dynamic.begin(), shape.dynamic.end());
  return s.apply(ops::OpId::BroadcastTo, std::move(attrs), std::move(inputs), a.span);
}

}  // namespace sg::compiler::staging
