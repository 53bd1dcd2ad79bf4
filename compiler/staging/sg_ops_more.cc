// The ordering ops (cumsum, sort, argsort, topk) and the shape ops tile, pad and
// split of the op library (SPEC §7). Dtype and shape checks are the op table's
// rules, run by Stager::apply; here arguments are read NumPy's way.
#include <cmath>

#include "staging/arg_binding.h"
#include "staging/sg_ops_internal.h"

namespace sg::compiler::staging {
namespace {

// A non-negative int from a static value; `what` names it in errors.
int64_t non_negative(Stager& s, const Value& v, SourceSpan span, const std::string& what) {
  if (v.is<Staged>()) s.fail(span, what + " must be known at compile time");
  const int64_t i = s.to_int(v, span, what);
  if (i < 0) s.fail(span, what + " must be >= 0, got " + std::to_string(i));
  return i;
}

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

Value sg_ordering(Stager& s, const Args& a, const std::string& name) {
  const bool cumsum = name == "cumsum";
  BoundArgs b(s, a, name, {"x", "axis"}, 1);
  Value x = s.to_tensor(b[0], std::nullopt, a.span);
  // An explicit axis=None flattens (NumPy); left out it is -1 except for cumsum.
  bool axis_given = a.pos.size() > 1;
  for (const auto& kv : a.kw) axis_given = axis_given || kv.first == "axis";
  Value axis = axis_given ? b[1] : cumsum ? Value() : Value(int64_t(-1));
  if (axis.is<NoneV>()) {  // NumPy: along the flattened tensor
    x = flatten(s, x, a.span);
    axis = Value(int64_t(0));
  }
  if (s.tensor_rank(x) == 0) s.fail(a.span, name + ": needs a tensor of rank 1 or more (or axis=None)");
  const ops::OpId op = cumsum ? ops::OpId::CumSum : name == "sort" ? ops::OpId::Sort : ops::OpId::ArgSort;
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Int(normalize_axis(s, axis, s.tensor_rank(x), a.span))};
  return s.apply(op, std::move(attrs), {x}, a.span);
}

Value sg_topk(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "k", "axis"}, 2);
  Value x = s.to_tensor(b[0], std::nullopt, a.span);
  if (s.tensor_rank(x) == 0) s.fail(a.span, "topk: needs a tensor of rank 1 or more");
  const int64_t k = non_negative(s, b[1], a.span, "topk's k");
  if (b.none(2)) s.fail(a.span, "topk: axis must be an int, got None");
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Int(k),
                  ops::AttrValue::Int(normalize_axis(s, b.get(2, Value(int64_t(-1))), s.tensor_rank(x), a.span))};
  return make_tuple(s.apply_all(ops::OpId::TopK, std::move(attrs), {x}, a.span));
}

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

}  // namespace sg::compiler::staging
