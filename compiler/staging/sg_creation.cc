// The creation family of the op library (SPEC §7): zeros, ones, full and their
// _like forms, arange, eye, one_hot.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "staging/arg_binding.h"
#include "staging/sg_ops_internal.h"

namespace sg::compiler::staging {
namespace {

StaticTensorPtr dense_tensor(DType dt, std::vector<int64_t> shape, const std::vector<double>& values, SourceSpan span) {
  auto t = std::make_shared<StaticTensor>();
  t->dtype = dt;
  t->shape = std::move(shape);
  t->origin = Origin{span, ""};
  for (double v : values) {
    StaticTensorPtr e = scalar_tensor(dt, v, is_int(dt) ? saturating_int64(v) : int64_t(v != 0));
    t->bytes.insert(t->bytes.end(), e->bytes.begin(), e->bytes.end());
  }
  return t;
}

// arange with a staged bound: an Arange node. Integer bounds keep a symbolic stop's
// identity (arange(len(b) + 1) is [M+1], SPEC §3); float bounds need the length as
// an input, computed here in the bounds' dtype.
Value staged_arange(Stager& s, Value start, Value stop, Value step, std::optional<DType> dtype, SourceSpan span) {
  bool floats = false;
  for (Value* v : {&start, &stop, &step}) {
    if (v->is<bool>() || (v->is_tensor() && s.tensor_dtype(*v) == DType::kBool))
      s.fail(span, "arange: bounds must be numbers, got a bool");
    if (v->is_tensor() && s.tensor_rank(*v) != 0)
      s.fail(span, "arange: bounds must be scalars, got a " + s.module().format_type(s.tensor_type(*v)) + " tensor");
    if (!v->is_tensor() && !v->is_number()) s.fail(span, "arange: bounds must be numbers, got " + type_name(*v));
    floats = floats || v->is<double>() || (v->is_tensor() && is_float(s.tensor_dtype(*v)));
  }
  const DType dt = dtype.value_or(floats ? DType::kF32 : DType::kI64);
  if (floats && !is_float(dt))
    s.fail(span, std::string("arange: float bounds with dtype ") + dtype_name(dt) + "; cast the result with astype");
  std::vector<Value> in;
  for (const Value& v : {start, stop, step}) in.push_back(s.cast(s.to_tensor(v, dt, span), dt, span));
  if (is_float(dt)) {
    // A zero step would make the length below infinite; an integer step is checked
    // by the Arange node itself, a float one first, by an Assert in program order.
    if (step.is_number()) {
      if ((step.is<double>() ? step.as<double>() : double(step.as<int64_t>())) == 0)
        s.fail(span, "arange: step must not be zero");
    } else {
      s.assert_at_run_time(s.tensor_binary(ops::OpId::NotEqual, in[2], Value(0.0), span),
                           "arange: step cannot be zero", span);
    }
    // max(ceil((stop - start) / step), 0) elements, as NumPy counts them.
    Value n = s.apply(ops::OpId::Ceil, {}, {s.tensor_binary(ops::OpId::Div, s.tensor_binary(ops::OpId::Sub, in[1], in[0], span), in[2], span)}, span);
    n = s.tensor_binary(ops::OpId::Maximum, s.cast(n, DType::kI64, span), Value(int64_t(0)), span);
    in.push_back(n);
  }
  return s.apply(ops::OpId::Arange, {}, std::move(in), span);
}

}  // namespace

Value sg_creation(Stager& s, const Args& a, const std::string& name) {
  const bool like = name.size() > 5 && name.compare(name.size() - 5, 5, "_like") == 0;
  const bool full = name == "full" || name == "full_like";
  BoundArgs b = full ? BoundArgs(s, a, name, {like ? "x" : "shape", "fill_value", "dtype"}, 2)
                     : BoundArgs(s, a, name, {like ? "x" : "shape", "dtype"}, 1);
  const size_t dtype_slot = full ? 2 : 1;
  ShapeArg shape;
  DType dt = DType::kF32;
  if (like) {
    Value x = s.to_tensor(b[0], std::nullopt, a.span);
    dt = s.tensor_dtype(x);
    shape = s.shape_arg(s.shape_tuple(x, a.span), a.span, false);
  } else {
    shape = s.shape_arg(b[0], a.span, false);
  }
  if (b.has(dtype_slot)) dt = dtype_arg(s, b[dtype_slot], b.span(dtype_slot));
  Value fill = full ? b[1] : Value(int64_t(name.rfind("ones", 0) == 0 ? 1 : 0));
  if (fill.is_tensor() && s.tensor_rank(fill) != 0) s.fail(a.span, name + ": the fill value must be a scalar");
  if (fill.is<double>() && !is_float(dt))  // as eager mode (_creation.py)
    s.fail(a.span, name + ": a float fill value for a " + dtype_name(dt) + " tensor; pass dtype=sg.f32 or an int");
  return make_full(s, shape, s.to_tensor(fill, dt, a.span), a.span);
}

Value sg_arange(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"start", "stop", "step", "dtype"}, 1);
  Value start = b.has(1) ? b[0] : Value(int64_t(0)), stop = b.has(1) ? b[1] : b[0], step = b.get(2, Value(int64_t(1)));
  if (start.is<Staged>() || stop.is<Staged>() || step.is<Staged>())
    return staged_arange(s, start, stop, step,
                         b.has(3) ? std::optional<DType>(dtype_arg(s, b[3], a.span)) : std::nullopt, a.span);
  bool floats = false;
  bool float_tensor = false;  // a bound is an f32/f16 tensor: NumPy counts in f32
  auto num = [&](const Value& v) {
    if (v.is<double>()) floats = true;
    if (v.is<double>()) return v.as<double>();
    if (v.is<StaticTensorPtr>()) {  // a 0-d tensor computed at compile time
      const StaticTensor& t = *v.as<StaticTensorPtr>();
      if (!t.shape.empty()) s.fail(a.span, "arange: bounds must be scalars, got a tensor of rank " +
                                               std::to_string(t.shape.size()));
      if (t.dtype == DType::kBool) s.fail(a.span, "arange: bounds must be numbers, got a bool");
      if (is_float(t.dtype)) {
        floats = float_tensor = true;
        return t.element_as_double(0);
      }
      return double(t.element_as_int(0));
    }
    return double(s.to_int(v, a.span, "arange bound"));
  };
  const double lo = num(start), hi = num(stop), st = num(step);
  if (st == 0) s.fail(a.span, "arange: step must not be zero");
  DType dt = floats ? DType::kF32 : DType::kI64;
  if (b.has(3)) dt = dtype_arg(s, b[3], a.span);
  if (floats && !is_float(dt))
    s.fail(a.span, std::string("arange: float bounds with dtype ") + dtype_name(dt) + "; cast the result with astype");
  // As NumPy counts: (stop - start) / step in the bounds' type, then the ceiling
  // (0.3 / 0.1 is 2.99... in double but 3 in f32, whose 0.3 and 0.1 differ).
  const double n = std::max(0.0, float_tensor ? std::ceil(double((float(hi) - float(lo)) / float(st)))
                                              : std::ceil((hi - lo) / st));
  if (n > 1e8) s.fail(a.span, "arange: too many elements at compile time");
  std::vector<double> values;
  for (int64_t i = 0; i < int64_t(n); ++i) values.push_back(lo + double(i) * st);
  return Value(dense_tensor(dt, {int64_t(n)}, values, a.span));
}

Value sg_eye(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"N", "M", "k", "dtype"}, 1);
  const int64_t n = s.to_int(b[0], a.span, "eye N");
  const int64_t m = b.has(1) && !b[1].is<NoneV>() ? s.to_int(b[1], a.span, "eye M") : n;
  const int64_t k = b.has(2) ? s.to_int(b[2], a.span, "eye k") : 0;
  if (n < 0 || m < 0 || n * m > 100000000) s.fail(a.span, "eye: bad size");
  std::vector<double> values(size_t(n * m), 0.0);
  // Ones at (i, i + k) for every row i whose column lies inside [0, m).
  if (k < m && k > -n)
    for (int64_t i = std::max<int64_t>(0, -k); i < n && i + k < m; ++i) values[size_t(i * m + i + k)] = 1;
  return Value(dense_tensor(b.has(3) ? dtype_arg(s, b[3], a.span) : DType::kF32, {n, m}, values, a.span));
}

Value sg_one_hot(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"indices", "depth", "dtype"}, 2);
  Value idx = s.to_tensor(b[0], std::nullopt, a.span);
  if (!is_int(s.tensor_dtype(idx))) s.fail(a.span, "one_hot: indices must be integers");
  if (b[1].is<Staged>()) {
    // A depth known at run time (a symbolic dim, x.shape[0]): the index compared
    // with arange(depth), which gives a zero row for an index outside [0, depth).
    const Value& depth = b[1];
    if (!is_int(s.tensor_dtype(depth)) || s.tensor_rank(depth) != 0)
      s.fail(a.span, "one_hot: depth must be an integer scalar, got a " +
                         s.module().format_type(s.tensor_type(depth)) + " tensor");
    Args r;
    r.span = a.span;
    r.pos = {depth};
    const Value positions = s.call_sg("arange", r);
    ops::Attrs expand;
    expand.values = {ops::AttrValue::Ints({int64_t(s.tensor_rank(idx))})};
    const Value column = s.apply(ops::OpId::ExpandDims, std::move(expand), {s.cast(idx, DType::kI64, a.span)}, a.span);
    const Value hot = s.tensor_binary(ops::OpId::Equal, column, positions, a.span);
    return s.cast(hot, b.has(2) ? dtype_arg(s, b[2], a.span) : DType::kF32, a.span);
  }
  const int64_t depth = s.to_int(b[1], a.span, "one_hot depth");
  if (depth < 0) s.fail(a.span, "one_hot: depth must be non-negative");
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Int(depth),
                  ops::AttrValue::Int(int64_t(b.has(2) ? dtype_arg(s, b[2], a.span) : DType::kF32))};
  return s.apply(ops::OpId::OneHot, std::move(attrs), {idx}, a.span);
}

}  // namespace sg::compiler::staging
