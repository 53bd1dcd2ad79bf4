// sg.random.NAME(...) (SPEC §3): keys are i64[2] tensors; every draw is one
// `random` op (kernels/ops/op_table.h's attr::Random), composed with ordinary ops
// exactly as eager mode composes them (compiler/python/stagegraph/random.py), so
// both give the same bits.
#include <string>

#include "staging/arg_binding.h"
#include "staging/sg_ops_internal.h"

namespace sg::compiler::staging {
namespace {

constexpr const char* kRandomFunctions[] = {"key", "split", "bits", "uniform", "normal", "categorical", "bernoulli"};

Value key_arg(Stager& s, const Value& v, const std::string& fn, SourceSpan span) {
  if (!v.is_tensor()) s.fail(span, fn + ": the key must be an i64[2] tensor (sg.random.key), got " + type_name(v));
  const ir::Type t = s.tensor_type(v);
  const std::optional<int64_t> n = t.rank() == 1 ? t.shape[0].as_static() : std::nullopt;
  if (t.dtype != DType::kI64 || n != std::optional<int64_t>(2))
    s.fail(span, fn + ": the key must be an i64[2] tensor (sg.random.key), got " + s.module().format_type(t));
  return v;
}

void f32_only(Stager& s, const BoundArgs& b, size_t slot, const std::string& fn) {
  if (b.has(slot) && dtype_arg(s, b[slot], b.span(slot)) != DType::kF32)
    s.fail(b.span(slot), fn + ": draws are f32, got dtype=" + dtype_name(dtype_arg(s, b[slot], b.span(slot))));
}

// One `random` node: `distribution` draws of `shape` under `key`.
Value draw(Stager& s, const Value& key, const Value& shape_value, int64_t distribution, SourceSpan span) {
  ShapeArg shape = s.shape_arg(shape_value, span, false);
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints(shape.dims), ops::AttrValue::Int(distribution)};
  std::vector<Value> inputs{key};
  inputs.insert(inputs.end(), shape.dynamic.begin(), shape.dynamic.end());
  return s.apply(ops::OpId::Random, std::move(attrs), std::move(inputs), span);
}

Value as_f32(Stager& s, const Value& v, SourceSpan span) {
  Value t = s.to_tensor(v, v.is_tensor() ? std::nullopt : std::optional<DType>(DType::kF32), span);
  return s.tensor_dtype(t) == DType::kF32 ? t : astype(s, t, Value(DTypeV{DType::kF32}), span);
}

bool is_number_equal(const Value& v, double x) {
  if (v.is<int64_t>()) return double(v.as<int64_t>()) == x;
  if (v.is<double>()) return v.as<double>() == x;
  return false;
}

// key(seed): [seed >> 32, seed & 0xffffffff] of the seed as an i64 (floor division and
// Python's modulo give exactly those words, for negative seeds too).
Value random_key(Stager& s, const Args& a, const std::string& fn) {
  BoundArgs b(s, a, fn, {"seed"}, 1);
  if (b[0].is<bool>() || b[0].is<double>()) s.fail(a.span, fn + ": the seed must be an integer, got " + type_name(b[0]));
  Value seed = s.to_tensor(b[0], std::nullopt, a.span);
  const ir::Type t = s.tensor_type(seed);
  if (!is_int(t.dtype) || t.rank() != 0)
    s.fail(a.span, fn + ": the seed must be an integer scalar, got " + s.module().format_type(t));
  if (t.dtype != DType::kI64) seed = astype(s, seed, Value(DTypeV{DType::kI64}), a.span);
  const Value word(int64_t(1) << 32);
  const Value hi = s.tensor_binary(ops::OpId::Mod, s.tensor_binary(ops::OpId::FloorDiv, seed, word, a.span), word, a.span);
  const Value lo = s.tensor_binary(ops::OpId::Mod, seed, word, a.span);
  Args stack;
  stack.pos = {make_tuple({hi, lo})};
  stack.span = a.span;
  return s.call_sg("stack", stack);
}

Value random_call(Stager& s, const Args& a, const std::string& name) {
  const std::string fn = "sg." + name;
  const std::string f = name.substr(name.find('.') + 1);
  if (f == "key") return random_key(s, a, fn);
  if (f == "split") {
    BoundArgs b(s, a, fn, {"key", "n"}, 1);
    return draw(s, key_arg(s, b[0], fn, a.span), b.get(1, Value(int64_t(2))), ops::attr::kKeys, a.span);
  }
  if (f == "bits") {
    BoundArgs b(s, a, fn, {"key", "shape"}, 1);
    return draw(s, key_arg(s, b[0], fn, a.span), b.get(1, make_tuple({})), ops::attr::kBits, a.span);
  }
  if (f == "normal") {
    BoundArgs b(s, a, fn, {"key", "shape", "dtype"}, 1);
    f32_only(s, b, 2, fn);
    return draw(s, key_arg(s, b[0], fn, a.span), b.get(1, make_tuple({})), ops::attr::kNormal, a.span);
  }
  if (f == "uniform") {
    // max(minval, u * (maxval - minval) + minval), u on [0, 1), as JAX; [0, 1) is u.
    BoundArgs b(s, a, fn, {"key", "shape", "dtype", "minval", "maxval"}, 1);
    f32_only(s, b, 2, fn);
    const Value u = draw(s, key_arg(s, b[0], fn, a.span), b.get(1, make_tuple({})), ops::attr::kUniform, a.span);
    const Value minval = b.get(3, Value(0.0)), maxval = b.get(4, Value(1.0));
    if (is_number_equal(minval, 0.0) && is_number_equal(maxval, 1.0)) return u;
    const Value lo = as_f32(s, minval, a.span), hi = as_f32(s, maxval, a.span);
    const Value scale = s.tensor_binary(ops::OpId::Sub, hi, lo, a.span);
    const Value v = s.tensor_binary(ops::OpId::Add, s.tensor_binary(ops::OpId::Mul, u, scale, a.span), lo, a.span);
    return s.tensor_binary(ops::OpId::Maximum, lo, v, a.span);
  }
  if (f == "categorical") {
    // argmax(gumbel(key, logits.shape) + logits, axis), as JAX.
    BoundArgs b(s, a, fn, {"key", "logits", "axis"}, 2);
    const Value key = key_arg(s, b[0], fn, a.span);
    const Value logits = as_f32(s, b[1], a.span);
    const size_t rank = s.tensor_rank(logits);
    if (rank == 0) s.fail(a.span, fn + ": logits must have at least one axis");
    const int64_t axis = normalize_axis(s, b.get(2, Value(int64_t(-1))), rank, a.span);
    const Value g = draw(s, key, s.shape_tuple(logits, a.span), ops::attr::kGumbel, a.span);
    return reduce(s, ops::OpId::ArgMax, s.tensor_binary(ops::OpId::Add, g, logits, a.span), Value(axis), false, a.span);
  }
  if (f == "bernoulli") {
    // uniform(key, shape) < p; the shape is p's unless given.
    BoundArgs b(s, a, fn, {"key", "p", "shape"}, 1);
    const Value key = key_arg(s, b[0], fn, a.span);
    const Value p = as_f32(s, b.get(1, Value(0.5)), a.span);
    const Value shape = b.has(2) ? b[2] : s.shape_tuple(p, a.span);
    return s.tensor_binary(ops::OpId::Less, draw(s, key, shape, ops::attr::kUniform, a.span), p, a.span);
  }
  s.fail(a.span, "sg.random is a module; call one of its functions (sg.random.key, sg.random.uniform, ...)");
}

}  // namespace

Value sg_random(Stager& s, const Args& a, const std::string& name) { return random_call(s, a, name); }

Value sg_member_attribute(Stager& s, const std::string& member, const std::string& name, SourceSpan span) {
  if (member == "random") {
    for (const char* f : kRandomFunctions)
      if (name == f) return Value(SgMember{"random." + name});
    s.fail(span, "module 'stagegraph.random' has no attribute '" + name + "'");
  }
  if (member == "nn") {
    // sg.nn: the losses, and the op library's neural-network ops under their own names.
    static const char* const kNn[] = {"cross_entropy", "binary_cross_entropy_with_logits", "mse", "l1"};
    for (const char* f : kNn)
      if (name == f) return Value(SgMember{"nn." + name});
    static const char* const kOps[] = {"softmax", "log_softmax", "relu", "gelu", "sigmoid", "tanh", "one_hot",
                                       "layer_norm", "conv2d", "max_pool2d", "avg_pool2d", "logsumexp"};
    for (const char* f : kOps)
      if (name == f) return Value(SgMember{name});
    s.fail(span, "module 'stagegraph.nn' has no attribute '" + name + "'");
  }
  if (member == "linalg") return sg_linalg_attribute(s, name, span);
  s.fail(span, "'function' object has no attribute '" + name + "'");
}

}  // namespace sg::compiler::staging
