// sg.NAME(...) dispatch: one table from library names to handlers.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string_view>

#include "staging/arg_binding.h"
#include "staging/indexing.h"
#include "staging/sg_ops_everyday.h"
#include "staging/sg_ops_internal.h"

namespace sg::compiler::staging {
namespace {

using Handler = Value (*)(Stager&, const Args&, const std::string&);

Value unary_op(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x"}, 1);
  const ops::OpId op = name == "negative" ? ops::OpId::Neg : *ops::find_op(name);
  const Value x = s.to_tensor(b[0], std::nullopt, a.span);
  if (op == ops::OpId::Log)
    if (std::optional<Value> stable = s.stable_log(x, a.span)) return *stable;
  return s.apply(op, {}, {x}, a.span);
}

std::optional<ops::OpId> binary_id(const std::string& name) {
  static const std::pair<const char*, ops::OpId> kAliases[] = {
      {"add", ops::OpId::Add},          {"subtract", ops::OpId::Sub},        {"multiply", ops::OpId::Mul},
      {"divide", ops::OpId::Div},       {"true_divide", ops::OpId::Div},     {"floor_divide", ops::OpId::FloorDiv},
      {"mod", ops::OpId::Mod},          {"remainder", ops::OpId::Mod},       {"power", ops::OpId::Pow}};
  for (const auto& [n, id] : kAliases)
    if (name == n) return id;
  return ops::find_op(name);
}

Value binary_op(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x1", "x2"}, 2);
  const ops::OpId op = *binary_id(name);
  Value x = b[0], y = b[1];
  if (!x.is_tensor() && !y.is_tensor()) x = s.to_tensor(x, std::nullopt, a.span);
  if ((op == ops::OpId::LogicalAnd || op == ops::OpId::LogicalOr)) {
    std::vector<Value> v = {x, y};
    for (Value& t : v) {
      if (!t.is_tensor()) t = s.to_tensor(t, std::nullopt, a.span);
      if (s.tensor_dtype(t) != DType::kBool) t = s.tensor_binary(ops::OpId::NotEqual, t, Value(int64_t(0)), a.span);
    }
    return s.apply(op, {}, v, a.span);
  }
  return s.tensor_binary(op, x, y, a.span);
}

Value reduction(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "axis", "keepdims"}, 1);
  static const std::pair<const char*, ops::OpId> kOps[] = {
      {"sum", ops::OpId::Sum}, {"mean", ops::OpId::Mean}, {"max", ops::OpId::Max},
      {"min", ops::OpId::Min}, {"prod", ops::OpId::Prod}, {"any", ops::OpId::Any},
      {"all", ops::OpId::All}, {"argmax", ops::OpId::ArgMax}, {"argmin", ops::OpId::ArgMin},
      {"amax", ops::OpId::Max}, {"amin", ops::OpId::Min}};
  ops::OpId op = ops::OpId::Sum;
  for (const auto& [n, id] : kOps)
    if (name == n) op = id;
  const bool keepdims = b.has(2) && s.truth(b[2], a.span, "keepdims");
  return reduce(s, op, b[0], b.get(1, Value()), keepdims, a.span);
}

Value matmul(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"a", "b"}, 2);
  Value x = s.to_tensor(b[0], std::nullopt, a.span), y = s.to_tensor(b[1], std::nullopt, a.span);
  if (name == "dot" && (s.tensor_rank(x) == 0 || s.tensor_rank(y) == 0)) return s.binary(BinOp::kMul, x, y, a.span);
  const size_t p = s.tensor_rank(x), q = s.tensor_rank(y);
  if (name == "dot" && p >= 2 && q >= 3) {
    // NumPy's dot of [A..., m, k] and [B..., k, n] is [A..., m, B..., n], the sum
    // over k. Unlike matmul it pairs every row of x with every matrix of y: x
    // becomes [A..., m, 1 (q-2 times), 1, k], whose batch dims broadcast against
    // y's, and the product [A..., m, B..., 1, n] loses its row dim. Where matmul
    // and dot agree (either rank at most 2, x of rank 1) matmul runs as it is.
    const ir::Type tx = s.tensor_type(x), ty = s.tensor_type(y);
    if (ops::dim_equal(tx.shape.back(), ty.shape[q - 2]) == ops::Tri::kNo)
      s.fail(a.span, "dot: shapes " + s.module().format_type(tx) + " and " + s.module().format_type(ty) +
                         " are not aligned: the last dim of the first and the second-to-last of the second differ");
    std::vector<int64_t> axes;
    for (size_t i = 0; i + 1 < q; ++i) axes.push_back(int64_t(p - 1 + i));
    ops::Attrs expand;
    expand.values = {ops::AttrValue::Ints(axes)};
    const Value rows = s.apply(ops::OpId::ExpandDims, std::move(expand), {x}, a.span);
    const Value product = s.binary(BinOp::kMatMul, rows, y, a.span);
    ops::Attrs squeeze;
    squeeze.values = {ops::AttrValue::Ints({int64_t(p + q - 3)})};
    return s.apply(ops::OpId::Squeeze, std::move(squeeze), {product}, a.span);
  }
  return s.binary(BinOp::kMatMul, x, y, a.span);
}

Value where(Stager& s, const Args& a, const std::string& name) {
  if (a.pos.size() + a.kw.size() == 1) return sg_nonzero(s, a, name);  // where(cond): nonzero(cond)
  BoundArgs b(s, a, name, {"condition", "x", "y"}, 3);
  Value c = s.to_tensor(b[0], std::nullopt, a.span);
  if (s.tensor_dtype(c) != DType::kBool)
    s.fail(a.span, std::string("where: the condition must be bool, got ") + dtype_name(s.tensor_dtype(c)));
  std::vector<Value> v = unify_dtypes(s, {b[1], b[2]}, "where", a.span);
  return s.apply(ops::OpId::Where, {}, {c, v[0], v[1]}, a.span);
}

Value clip(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "a_min", "a_max"}, 3);
  if (!b.has(1) && !b.has(2)) s.fail(a.span, "clip: one of a_min and a_max must be given");
  if (!b.has(1)) return s.tensor_binary(ops::OpId::Minimum, s.to_tensor(b[0], std::nullopt, a.span), b[2], a.span);
  if (!b.has(2)) return s.tensor_binary(ops::OpId::Maximum, s.to_tensor(b[0], std::nullopt, a.span), b[1], a.span);
  std::vector<Value> v = unify_dtypes(s, {s.to_tensor(b[0], std::nullopt, a.span), b[1], b[2]}, "clip", a.span);
  return s.apply(ops::OpId::Clip, {}, v, a.span);
}

Value reshape_op(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "shape"}, 2);
  return reshape(s, b[0], b[1], a.span);
}

Value transpose_op(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "axes"}, 1);
  return transpose(s, s.to_tensor(b[0], std::nullopt, a.span), b.get(1, Value()), a.span);
}

Value expand_squeeze(Stager& s, const Args& a, const std::string& name) {
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

Value concat_stack(Stager& s, const Args& a, const std::string& name) {
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

Value broadcast_to(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "shape"}, 2);
  ShapeArg shape = s.shape_arg(b[1], a.span, false);
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints(shape.dims)};
  std::vector<Value> inputs{s.to_tensor(b[0], std::nullopt, a.span)};
  inputs.insert(inputs.end(), shape.dynamic.begin(), shape.dynamic.end());
  return s.apply(ops::OpId::BroadcastTo, std::move(attrs), std::move(inputs), a.span);
}

Value take(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "indices", "axis"}, 2);
  Value x = s.to_tensor(b[0], std::nullopt, a.span);
  Value idx = b[1];
  if (idx.is<TuplePtr>() || idx.is<ListPtr>()) {
    std::vector<Value> items = s.to_list(idx, a.span);
    auto t = std::make_shared<StaticTensor>();
    t->dtype = DType::kI64;
    t->shape = {int64_t(items.size())};
    for (const Value& v : items) {
      const int64_t i = s.to_int(v, a.span, "an index");
      const uint8_t* p = reinterpret_cast<const uint8_t*>(&i);
      t->bytes.insert(t->bytes.end(), p, p + 8);
    }
    idx = Value(StaticTensorPtr(t));
  }
  idx = s.to_tensor(idx, std::nullopt, a.span);
  if (!is_int(s.tensor_dtype(idx))) s.fail(a.span, "take: indices must be integers");
  if (b.none(2)) x = flatten(s, x, a.span);  // NumPy: indices into the flattened tensor
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Int(normalize_axis(s, b.get(2, Value(int64_t(0))), s.tensor_rank(x), a.span))};
  return s.apply(ops::OpId::Take, std::move(attrs), {x, idx}, a.span);
}

Value creation(Stager& s, const Args& a, const std::string& name) {
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

Value arange(Stager& s, const Args& a, const std::string& name) {
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

Value eye(Stager& s, const Args& a, const std::string& name) {
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

Value astype_op(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "dtype"}, 2);
  return astype(s, b[0], b[1], a.span);
}

Value softmax(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "axis"}, 1);
  Value x = s.to_tensor(b[0], std::nullopt, a.span);
  // Ints and bools give f32, as exp does (SPEC §3).
  if (!is_float(s.tensor_dtype(x))) x = s.cast(x, DType::kF32, a.span);
  const ops::OpId op = name == "softmax" ? ops::OpId::Softmax : ops::OpId::LogSoftmax;
  if (b.none(1) && s.tensor_rank(x) != 1) {
    // Over all elements: along the flattened tensor, then back to x's shape.
    ops::Attrs attrs;
    attrs.values = {ops::AttrValue::Int(0)};
    return reshape(s, s.apply(op, std::move(attrs), {flatten(s, x, a.span)}, a.span), s.shape_tuple(x, a.span), a.span);
  }
  if (b.has(1) && (b[1].is<TuplePtr>() || b[1].is<ListPtr>())) {
    // Over several axes: they move to the end and merge into one, the op runs
    // along it, and the result goes back (an empty tensor stays empty, as in
    // eager mode, where a max over an empty axis would fail).
    const size_t rank = s.tensor_rank(x);
    const std::vector<int64_t> over = normalize_axes(s, b[1], rank, a.span);
    std::vector<Value> perm, inverse(rank);
    for (size_t i = 0; i < rank; ++i)
      if (!std::binary_search(over.begin(), over.end(), int64_t(i))) perm.push_back(Value(int64_t(i)));
    const size_t kept = perm.size();
    for (int64_t i : over) perm.push_back(Value(i));
    for (size_t i = 0; i < rank; ++i) inverse[size_t(perm[i].as<int64_t>())] = Value(int64_t(i));
    const Value moved = transpose(s, x, make_tuple(perm), a.span);
    const Value shape = s.shape_tuple(moved, a.span);
    std::vector<Value> dims = s.to_list(shape, a.span);
    Value merged(int64_t(1));
    for (size_t i = kept; i < rank; ++i) merged = s.binary(BinOp::kMul, merged, dims[i], a.span);
    dims.resize(kept);
    dims.push_back(merged);
    ops::Attrs attrs;
    attrs.values = {ops::AttrValue::Int(int64_t(kept))};
    const Value r = s.apply(op, std::move(attrs), {reshape(s, moved, make_tuple(dims), a.span)}, a.span);
    return transpose(s, reshape(s, r, shape, a.span), make_tuple(inverse), a.span);
  }
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Int(normalize_axis(s, b.get(1, Value(int64_t(-1))), s.tensor_rank(x), a.span))};
  return s.apply(op, std::move(attrs), {x}, a.span);
}

Value layer_norm(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "gamma", "beta", "eps"}, 3);
  const SourceSpan sp = a.span;
  Value x = s.to_tensor(b[0], std::nullopt, sp);
  if (s.tensor_rank(x) == 0) s.fail(sp, "layer_norm: needs a tensor of rank 1 or more");
  const DType dt = s.tensor_dtype(x);
  if (!is_float(dt))
    s.fail(sp, std::string("layer_norm: x must be f32 or f16, got ") + dtype_name(dt) + "; cast with astype");
  const Value eps = b.get(3, Value(1e-5));
  if (!eps.is<double>() && !eps.is<int64_t>()) s.fail(sp, "layer_norm: eps must be a Python number, got " + type_name(eps));
  const double eps_value = eps.is<double>() ? eps.as<double>() : double(eps.as<int64_t>());
  const Value gamma = s.to_tensor(b[1], dt, sp), beta = s.to_tensor(b[2], dt, sp);
  if (s.tensor_rank(gamma) <= 1 && s.tensor_rank(beta) <= 1) {
    ops::Attrs attrs;
    attrs.values = {ops::AttrValue::Float(eps_value)};
    return s.apply(ops::OpId::LayerNorm, std::move(attrs), {x, gamma, beta}, sp);
  }
  // gamma or beta of a higher rank broadcast against x: the definition, op by op.
  const Value last(int64_t(-1));
  Value mu = reduce(s, ops::OpId::Mean, x, last, true, sp);
  Value d = s.binary(BinOp::kSub, x, mu, sp);
  Value var = reduce(s, ops::OpId::Mean, s.binary(BinOp::kMul, d, d, sp), last, true, sp);
  Value inv = s.apply(ops::OpId::Rsqrt, {}, {s.binary(BinOp::kAdd, var, Value(eps_value), sp)}, sp);
  return s.binary(BinOp::kAdd, s.binary(BinOp::kMul, s.binary(BinOp::kMul, d, inv, sp), gamma, sp), beta, sp);
}

std::vector<int64_t> pair_arg(Stager& s, const Value& v, SourceSpan span, const char* what) {
  if (v.is<TuplePtr>() || v.is<ListPtr>()) {
    std::vector<Value> items = s.to_list(v, span);
    if (items.size() != 2) s.fail(span, std::string(what) + " must be an int or a pair of ints");
    return {s.to_int(items[0], span, what), s.to_int(items[1], span, what)};
  }
  const int64_t i = s.to_int(v, span, what);
  return {i, i};
}

std::string padding_arg(Stager& s, const Value& v, SourceSpan span) {
  if (v.is<std::string>() && (v.as<std::string>() == "VALID" || v.as<std::string>() == "SAME")) return v.as<std::string>();
  s.fail(span, "padding must be \"VALID\" or \"SAME\", got " + py_repr(v));
}

Value conv2d(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "w", "stride", "padding", "dilation", "groups"}, 2);
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints(pair_arg(s, b.get(2, Value(int64_t(1))), a.span, "stride")),
                  ops::AttrValue::Ints(pair_arg(s, b.get(4, Value(int64_t(1))), a.span, "dilation")),
                  ops::AttrValue::String(padding_arg(s, b.get(3, Value(std::string("VALID"))), a.span)),
                  ops::AttrValue::Int(s.to_int(b.get(5, Value(int64_t(1))), a.span, "groups"))};
  std::vector<Value> v = unify_dtypes(s, {b[0], b[1]}, name, a.span);
  return s.apply(ops::OpId::Conv2D, std::move(attrs), v, a.span);
}

Value pool2d(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "size", "stride", "padding"}, 2);
  std::vector<int64_t> size = pair_arg(s, b[1], a.span, "size");
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints(size),
                  ops::AttrValue::Ints(b.has(2) ? pair_arg(s, b[2], a.span, "stride") : size),
                  ops::AttrValue::String(padding_arg(s, b.get(3, Value(std::string("VALID"))), a.span))};
  return s.apply(name == "max_pool2d" ? ops::OpId::MaxPool2D : ops::OpId::AvgPool2D, std::move(attrs),
                 {s.to_tensor(b[0], std::nullopt, a.span)}, a.span);
}

Value one_hot(Stager& s, const Args& a, const std::string& name) {
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

Value weight(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"name", "quantize"}, 1);
  if (!b[0].is<std::string>()) s.fail(a.span, "sg.weight needs the tensor's name as a string");
  if (b.has(1) && !b[1].is<std::string>())
    s.fail(b.span(1), "sg.weight's quantize= takes 'int8', 'int4', 'bf16' or 'f16'");
  return s.load_weight(b[0].as<std::string>(), a.span, b.has(1) ? b[1].as<std::string>() : std::string());
}

Value relax(Stager& s, const Args& a, const std::string&) {
  Args copy = a;
  return s.sg_relax(copy);
}

Value not_yet(Stager& s, const Args& a, const std::string& name) {
  if (name == "range")
    s.fail(a.span, "sg.range is only allowed as the iterable of a for loop (for i in sg.range(n):)");
  if (name == "function") s.fail(a.span, "sg.function is a decorator: write @sg.function above a def");
  if (name == "load_weights") return Value();
  s.fail(a.span, "sg." + name + " needs an op the op library does not have yet");
}

Value variables(Stager& s, const Args& a, const std::string&) { return s.make_variables(a); }

Value grad_family(Stager& s, const Args& a, const std::string& name) {
  Args copy = a;
  return s.call_sg_grad(name, copy);
}

struct Entry {
  const char* name;
  Handler handler;
};

const Entry kTable[] = {
    {"abs", unary_op}, {"exp", unary_op}, {"log", unary_op}, {"sqrt", unary_op}, {"rsqrt", unary_op},
    {"sin", unary_op}, {"cos", unary_op}, {"tanh", unary_op}, {"sigmoid", unary_op}, {"relu", unary_op},
    {"gelu", unary_op}, {"floor", unary_op}, {"ceil", unary_op}, {"round", unary_op}, {"sign", unary_op},
    {"square", unary_op}, {"logical_not", unary_op}, {"isnan", unary_op}, {"negative", unary_op},
    {"add", binary_op}, {"subtract", binary_op}, {"multiply", binary_op}, {"divide", binary_op},
    {"true_divide", binary_op}, {"floor_divide", binary_op}, {"mod", binary_op}, {"remainder", binary_op},
    {"power", binary_op}, {"maximum", binary_op}, {"minimum", binary_op}, {"less", binary_op},
    {"less_equal", binary_op}, {"greater", binary_op}, {"greater_equal", binary_op}, {"equal", binary_op},
    {"not_equal", binary_op}, {"logical_and", binary_op}, {"logical_or", binary_op},
    {"sum", reduction}, {"mean", reduction}, {"max", reduction}, {"min", reduction}, {"amax", reduction},
    {"amin", reduction}, {"prod", reduction}, {"any", reduction}, {"all", reduction}, {"argmax", reduction},
    {"argmin", reduction},
    {"matmul", matmul}, {"dot", matmul}, {"where", where}, {"clip", clip},
    {"reshape", reshape_op}, {"transpose", transpose_op}, {"expand_dims", expand_squeeze},
    {"squeeze", expand_squeeze}, {"concatenate", concat_stack}, {"stack", concat_stack},
    {"broadcast_to", broadcast_to}, {"take", take}, {"nonzero", sg_nonzero}, {"flatnonzero", sg_nonzero},
    {"compress", sg_compress},
    {"zeros", creation}, {"ones", creation}, {"full", creation}, {"zeros_like", creation},
    {"ones_like", creation}, {"full_like", creation}, {"arange", arange}, {"eye", eye},
    {"astype", astype_op}, {"softmax", softmax}, {"log_softmax", softmax}, {"layer_norm", layer_norm},
    {"conv2d", conv2d}, {"max_pool2d", pool2d}, {"avg_pool2d", pool2d}, {"one_hot", one_hot},
    {"range", not_yet}, {"relax", relax}, {"weight", weight}, {"function", not_yet},
    {"load_weights", not_yet}, {"cumsum", sg_ordering}, {"sort", sg_ordering}, {"argsort", sg_ordering},
    {"topk", sg_topk}, {"split", sg_split}, {"tile", sg_tile}, {"pad", sg_pad},
    {"random", sg_random}, {"random.key", sg_random}, {"random.split", sg_random},
    {"random.bits", sg_random}, {"random.uniform", sg_random}, {"random.normal", sg_random},
    {"random.categorical", sg_random}, {"random.bernoulli", sg_random}, {"custom_op", sg_custom_op},
    {"grad", grad_family}, {"value_and_grad", grad_family}, {"vjp", grad_family}, {"checkpoint", grad_family},
    {"stop_gradient", grad_family}, {"logsumexp", grad_family}, {"nn", grad_family},
    {"nn.cross_entropy", grad_family}, {"nn.binary_cross_entropy_with_logits", grad_family}, {"nn.mse", grad_family},
    {"nn.l1", grad_family}, {"variables", variables}, {"tree_map", sg_tree},
    {"searchsorted", sg_searchsorted}, {"cumprod", sg_cumprod}, {"logaddexp", sg_logaddexp}, {"diff", sg_diff},
    {"flip", sg_flip}, {"roll", sg_roll}, {"meshgrid", sg_meshgrid}, {"outer", sg_outer}, {"einsum", sg_einsum},
    {"isclose", sg_isclose}, {"allclose", sg_isclose},
    {"linalg", sg_linalg}, {"linalg.inv", sg_linalg}, {"linalg.solve", sg_linalg}, {"linalg.det", sg_linalg},
    {"linalg.slogdet", sg_linalg}, {"linalg.cholesky", sg_linalg}, {"linalg.triangular_solve", sg_linalg},
    {"linalg.qr", sg_linalg}, {"linalg.eigh", sg_linalg}, {"linalg.norm", sg_linalg},
};

const Entry* find_entry(const std::string& name) {
  for (const Entry& e : kTable)
    if (name == e.name) return &e;
  return nullptr;
}

}  // namespace

bool Stager::is_sg_member(const std::string& name) { return find_entry(name) != nullptr; }

Value Stager::call_sg(const std::string& name, Args& args) {
  const Entry* e = find_entry(name);
  if (!e) fail(args.span, "module 'stagegraph' has no function '" + name + "'");
  return e->handler(*this, args, name);
}

}  // namespace sg::compiler::staging
