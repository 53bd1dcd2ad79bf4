// The neural-network family of the op library (SPEC §7): softmax, log_softmax,
// layer_norm, conv2d, max_pool2d, avg_pool2d.
#include <algorithm>
#include <string>
#include <vector>

#include "staging/arg_binding.h"
#include "staging/sg_ops_internal.h"

namespace sg::compiler::staging {
namespace {

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

}  // namespace

Value sg_softmax(Stager& s, const Args& a, const std::string& name) {
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

Value sg_layer_norm(Stager& s, const Args& a, const std::string& name) {
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

Value sg_conv2d(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "w", "stride", "padding", "dilation", "groups"}, 2);
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints(pair_arg(s, b.get(2, Value(int64_t(1))), a.span, "stride")),
                  ops::AttrValue::Ints(pair_arg(s, b.get(4, Value(int64_t(1))), a.span, "dilation")),
                  ops::AttrValue::String(padding_arg(s, b.get(3, Value(std::string("VALID"))), a.span)),
                  ops::AttrValue::Int(s.to_int(b.get(5, Value(int64_t(1))), a.span, "groups"))};
  std::vector<Value> v = unify_dtypes(s, {b[0], b[1]}, name, a.span);
  return s.apply(ops::OpId::Conv2D, std::move(attrs), v, a.span);
}

Value sg_pool2d(Stager& s, const Args& a, const std::string& name) {
  BoundArgs b(s, a, name, {"x", "size", "stride", "padding"}, 2);
  std::vector<int64_t> size = pair_arg(s, b[1], a.span, "size");
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints(size),
                  ops::AttrValue::Ints(b.has(2) ? pair_arg(s, b[2], a.span, "stride") : size),
                  ops::AttrValue::String(padding_arg(s, b.get(3, Value(std::string("VALID"))), a.span))};
  return s.apply(name == "max_pool2d" ? ops::OpId::MaxPool2D : ops::OpId::AvgPool2D, std::move(attrs),
                 {s.to_tensor(b[0], std::nullopt, a.span)}, a.span);
}

}  // namespace sg::compiler::staging
