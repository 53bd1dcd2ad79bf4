// The op library as seen from a staged program (SPEC §7): sg.NAME(...) calls,
// mapped onto op-table ops through one dispatch table. Shapes and dtypes are
// checked by the op table's rules inside Stager::apply.
#include <algorithm>
#include <cstring>

#include "staging/arg_binding.h"
#include "staging/control_state.h"
#include "staging/sg_ops_internal.h"

namespace sg::compiler::staging {

int64_t normalize_axis(Stager& s, const Value& v, size_t rank, SourceSpan span) {
  const int64_t a = s.to_int(v, span, "axis");
  const int64_t r = int64_t(rank);
  if (a < -r || a >= r)
    s.fail(span, "axis " + std::to_string(a) + " is out of bounds for a tensor of rank " + std::to_string(rank));
  return a < 0 ? a + r : a;
}

std::vector<int64_t> normalize_axes(Stager& s, const Value& v, size_t rank, SourceSpan span) {
  std::vector<int64_t> axes;
  if (v.is<NoneV>()) {
    for (size_t i = 0; i < rank; ++i) axes.push_back(int64_t(i));
    return axes;
  }
  if (v.is<TuplePtr>() || v.is<ListPtr>()) {
    for (const Value& a : s.to_list(v, span)) axes.push_back(normalize_axis(s, a, rank, span));
  } else {
    axes.push_back(normalize_axis(s, v, rank, span));
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) s.fail(span, "repeated axis");
  return axes;
}

// A non-negative int from a static value; `what` names it in errors.
int64_t non_negative(Stager& s, const Value& v, SourceSpan span, const std::string& what) {
  if (v.is<Staged>()) s.fail(span, what + " must be known at compile time");
  const int64_t i = s.to_int(v, span, what);
  if (i < 0) s.fail(span, what + " must be >= 0, got " + std::to_string(i));
  return i;
}

DType dtype_arg(Stager& s, const Value& v, SourceSpan span) {
  if (v.is<DTypeV>()) return v.as<DTypeV>().dtype;
  if (v.is<std::string>()) {
    if (auto d = dtype_from_name(v.as<std::string>())) return *d;
  }
  s.fail(span, "expected a dtype (sg.f32, sg.f16, sg.i32, sg.i64, sg.bool), got " + py_repr(v));
}

// max, min, argmax and argmin of an empty axis are errors (NumPy's too): warn
// when a reduced axis is one a staged loop that may run zero times grows.
void warn_empty_extreme(Stager& s, ops::OpId op, const Value& x, const Value& axis, SourceSpan span) {
  if (op != ops::OpId::Max && op != ops::OpId::Min && op != ops::OpId::ArgMax && op != ops::OpId::ArgMin) return;
  const ir::Type t = s.tensor_type(x);
  const std::string name = ops::op_def(op).name;
  for (int64_t a : normalize_axes(s, axis, t.rank(), span))
    warn_zero_trip_read(s, t.shape[size_t(a)], "sg." + name + " over",
                        "sg." + name + " of an empty axis is then a run-time error (in eager mode too)", span);
}

Value reduce(Stager& s, ops::OpId op, const Value& x_in, const Value& axis, bool keepdims, SourceSpan span) {
  Value x = s.to_tensor(x_in, std::nullopt, span);
  const size_t rank = s.tensor_rank(x);
  warn_empty_extreme(s, op, x, axis, span);
  if (op == ops::OpId::ArgMax || op == ops::OpId::ArgMin) {
    int64_t a = 0;
    if (axis.is<NoneV>()) {  // NumPy: the index into the flattened tensor
      x = flatten(s, x, span);
    } else {
      a = normalize_axis(s, axis, rank, span);
    }
    ops::Attrs attrs;
    attrs.values = {ops::AttrValue::Int(a), ops::AttrValue::Int(keepdims && !axis.is<NoneV>())};
    Value r = s.apply(op, std::move(attrs), {x}, span);
    if (keepdims && axis.is<NoneV>()) {
      ops::Attrs shape;
      shape.values = {ops::AttrValue::Ints(std::vector<int64_t>(rank, 1))};
      r = s.apply(ops::OpId::Reshape, std::move(shape), {r}, span);
    }
    return r;
  }
  std::vector<int64_t> axes = normalize_axes(s, axis, rank, span);
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints(axes), ops::AttrValue::Int(keepdims)};
  Value r = s.apply(op, std::move(attrs), {x}, span);
  if (!keepdims && !axes.empty() && axes.size() < rank) s.note_reduction(r, axes);
  return r;
}

Value make_full(Stager& s, const ShapeArg& shape, const Value& fill, SourceSpan span) {
  if (shape.all_static() && fill.is<StaticTensorPtr>()) {
    auto t = std::make_shared<StaticTensor>();
    const StaticTensor& f = *fill.as<StaticTensorPtr>();
    t->dtype = f.dtype;
    t->shape = shape.dims;
    t->bytes.assign(f.bytes.begin(), f.bytes.begin() + long(dtype_size(f.dtype)));
    t->splat = true;
    t->origin = Origin{span, ""};
    if (t->numel() <= 1) {
      t->bytes.resize(size_t(t->numel()) * dtype_size(f.dtype));
      t->splat = false;
    }
    return Value(StaticTensorPtr(t));
  }
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints(shape.dims)};
  std::vector<Value> inputs{fill};
  inputs.insert(inputs.end(), shape.dynamic.begin(), shape.dynamic.end());
  return s.apply(ops::OpId::Full, std::move(attrs), std::move(inputs), span);
}

Value flatten(Stager& s, const Value& x, SourceSpan span) {
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints({ops::attr::kInferDim})};
  return s.apply(ops::OpId::Reshape, std::move(attrs), {x}, span);
}

Value reshape(Stager& s, const Value& x, const Value& shape_value, SourceSpan span) {
  ShapeArg shape = s.shape_arg(shape_value, span, true);
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints(shape.dims)};
  std::vector<Value> inputs{s.to_tensor(x, std::nullopt, span)};
  inputs.insert(inputs.end(), shape.dynamic.begin(), shape.dynamic.end());
  return s.apply(ops::OpId::Reshape, std::move(attrs), std::move(inputs), span);
}

Value transpose(Stager& s, const Value& x, const Value& axes, SourceSpan span) {
  const size_t rank = s.tensor_rank(x);
  std::vector<int64_t> perm;
  if (axes.is<NoneV>()) {
    for (size_t i = rank; i-- > 0;) perm.push_back(int64_t(i));
  } else {
    for (const Value& a : s.to_list(axes, span)) perm.push_back(normalize_axis(s, a, rank, span));
    std::vector<int64_t> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i)
      if (sorted.size() != rank || sorted[i] != int64_t(i))
        s.fail(span, "transpose: axes " + py_repr(axes) + " are not a permutation of the " + std::to_string(rank) + " axes");
  }
  if (rank < 2) return x;
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints(perm)};
  return s.apply(ops::OpId::Transpose, std::move(attrs), {x}, span);
}

Value astype(Stager& s, const Value& x, const Value& dtype, SourceSpan span) {
  return s.cast(s.to_tensor(x, std::nullopt, span), dtype_arg(s, dtype, span), span);
}

// Tensors from values that may be Python numbers, with SPEC §3's rules: a number
// beside a tensor takes the tensor's dtype (float beside int: f32), numbers
// alone their own dtype; two tensors must agree.
std::vector<Value> unify_dtypes(Stager& s, std::vector<Value> vals, const std::string& op, SourceSpan span) {
  std::optional<DType> dt;
  bool any_float_number = false;
  // Values that stand for Python numbers (a counter, a carried `total = 0`)
  // take the other tensors' dtype where the number can, as in eager mode.
  bool all_weak = true;
  for (const Value& v : vals) all_weak = all_weak && (!v.is_tensor() || s.weak_origin(v));
  for (Value& v : vals) {
    if (v.is_tensor()) {
      if (const WeakOrigin* w = s.weak_origin(v); w && !all_weak) {
        for (const Value& o : vals)
          if (o.is_tensor() && !s.weak_origin(o) && s.tensor_dtype(o) != s.tensor_dtype(v) &&
              Stager::number_fits(w->number, s.tensor_dtype(o))) {
            v = s.cast(v, s.tensor_dtype(o), span);
            break;
          }
      }
      const DType t = s.tensor_dtype(v);
      if (dt && *dt != t)
        s.fail(span, op + ": operands have different dtypes " + dtype_name(*dt) + " and " + dtype_name(t) +
                         "; cast one with astype", s.provenance_notes(vals));
      dt = t;
    } else if (!v.is_number()) {
      s.fail(span, op + ": expected a tensor or a number, got " + type_name(v));
    } else {
      any_float_number = any_float_number || v.is<double>();
    }
  }
  if (dt) {
    if (any_float_number && !is_float(*dt)) dt = DType::kF32;
    if (*dt == DType::kBool) {
      for (const Value& v : vals)
        if (v.is<int64_t>()) dt = DType::kI64;
    }
  }
  for (Value& v : vals) v = s.to_tensor(v, dt ? dt : std::optional<DType>(python_number_dtype(v)), span);
  if (!dt) {  // numbers only: the widest Python kind wins
    DType w = DType::kBool;
    for (const Value& v : vals) {
      const DType t = s.tensor_dtype(v);
      if (t == DType::kF32 || (t == DType::kI64 && w == DType::kBool)) w = t;
    }
    for (Value& v : vals) v = s.cast(v, w, span);
  }
  return vals;
}

}  // namespace sg::compiler::staging
