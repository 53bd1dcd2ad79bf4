// sg.grad, sg.value_and_grad, sg.vjp, sg.checkpoint, sg.stop_gradient (SPEC §11),
// sg.logsumexp and sg.nn's losses.
//
// A differentiated function is staged into a graph function of its own whose
// parameters are the tensor leaves of the arguments differentiated (captured
// staged values become further parameters, as for a branch); autodiff.cc builds
// its adjoint, and the caller gets a Call of it. The arguments and the gradient
// share one structure: tuples, lists, dicts, named tuples, dataclasses and the
// program's own objects, with tensors (or Python floats) at the leaves.
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "staging/arg_binding.h"
#include "staging/autodiff.h"
#include "staging/differentiation.h"
#include "staging/sg_ops_internal.h"
#include "staging/sg_variables.h"
#include "staging/stager.h"

namespace sg::compiler::staging {

struct PullbackData {
  int32_t forward = -1;          // the function f was staged into
  std::vector<Value> inputs;     // its parameters' values at the sg.vjp call
  size_t num_leaves = 0;         // the primals' leaves (the rest are captures)
  std::vector<Value> primals;    // the primals' structures
  Value out;                     // f's result structure
  std::vector<bool> float_out;   // per result leaf: takes a cotangent
  int32_t adjoint = -1;          // built on the first call
};

namespace {

bool is_float_dtype(DType d) { return d == DType::kF32 || d == DType::kF16; }

// The leaves of a structure, in order: tensors, and Python floats when `floats`.
void flatten(const Value& v, std::vector<Value>& leaves, bool floats) {
  if (v.is_tensor() || (floats && v.is<double>())) {
    leaves.push_back(v);
    return;
  }
  if (v.is<TuplePtr>())
    for (const Value& item : *v.as<TuplePtr>()) flatten(item, leaves, floats);
  else if (v.is<ListPtr>())
    for (const Value& item : v.as<ListPtr>()->items) flatten(item, leaves, floats);
  else if (v.is<DictPtr>())
    for (const auto& kv : v.as<DictPtr>()->items) flatten(kv.second, leaves, floats);
  else if (v.is<InstancePtr>())
    for (const auto& kv : v.as<InstancePtr>()->attrs->items) flatten(kv.second, leaves, floats);
}

// `tmpl` with its leaves replaced by leaves[next...], in flatten's order.
Value rebuild(const Value& tmpl, const std::vector<Value>& leaves, size_t& next, bool floats) {
  if (tmpl.is_tensor() || (floats && tmpl.is<double>())) return leaves.at(next++);
  if (tmpl.is<TuplePtr>()) {
    std::vector<Value> items;
    for (const Value& item : *tmpl.as<TuplePtr>()) items.push_back(rebuild(item, leaves, next, floats));
    return make_tuple(std::move(items));
  }
  if (tmpl.is<ListPtr>()) {
    std::vector<Value> items;
    for (const Value& item : tmpl.as<ListPtr>()->items) items.push_back(rebuild(item, leaves, next, floats));
    return make_list(std::move(items));
  }
  if (tmpl.is<DictPtr>()) {
    auto d = std::make_shared<DictObj>();
    for (const auto& [k, v] : tmpl.as<DictPtr>()->items) d->items.emplace_back(k, rebuild(v, leaves, next, floats));
    return Value(DictPtr(d));
  }
  if (tmpl.is<InstancePtr>()) {
    auto copy = std::make_shared<InstanceObj>(*tmpl.as<InstancePtr>());
    copy->attrs = std::make_shared<DictObj>(*copy->attrs);
    for (auto& kv : copy->attrs->items) kv.second = rebuild(kv.second, leaves, next, floats);
    return Value(copy);
  }
  return tmpl;
}

// A graph function staged from a Python-level call: the call's result, the
// function's id, and the values its parameters take in the caller (the leaves,
// then the captured values).
struct StagedFn {
  int32_t fn = -1;
  Value result;
  std::vector<Value> inputs;
  size_t num_leaves = 0;
};

// Stages `callee(*pos, **kw)` into a new graph function whose parameters are the
// leaves of the positional arguments at `diff` (the others are passed as they
// are; their staged values are captured), and whose results are the leaves
// `results` picks from the call's result.
StagedFn stage_apart(Stager& s, const Value& callee, const Args& args, const std::vector<bool>& diff,
                     const std::string& name,
                     const std::function<std::vector<Value>(const Value&)>& results) {
  if (!s.builder()) s.fail(args.span, name + " of a function is only allowed inside a function");
  ir::Module& m = s.module();
  m.functions.push_back(ir::Function{});
  StagedFn out;
  out.fn = int32_t(m.functions.size() - 1);
  m.functions.back().name = nested_function_name(s.fn().name, name + std::to_string(args.span.line)) + "#" +
                            std::to_string(out.fn);
  auto builder = std::make_unique<FnBuilder>();
  builder->fn = out.fn;
  builder->parent = s.builder();
  std::vector<std::vector<Value>> leaves(args.pos.size());
  for (size_t k = 0; k < args.pos.size(); ++k)
    if (diff[k]) flatten(args.pos[k], leaves[k], true);
  for (size_t k = 0; k < args.pos.size(); ++k)
    for (Value& leaf : leaves[k]) {
      if (leaf.is<double>()) leaf = s.to_tensor(leaf, DType::kF32, args.span);
      out.inputs.push_back(leaf);
    }
  out.num_leaves = out.inputs.size();
  std::vector<ir::Type> types;
  for (const Value& leaf : out.inputs) types.push_back(s.tensor_type(leaf));
  FnBuilder* parent = s.builder();
  s.set_builder(builder.get());
  std::vector<Value> params;
  for (const ir::Type& t : types) {
    const int32_t id = s.fn().add_value(t, "", args.span);
    s.fn().params.push_back(id);
    params.push_back(s.staged(id));
  }
  Args inner = args;
  size_t next = 0;
  for (size_t k = 0; k < args.pos.size(); ++k)
    if (diff[k]) {
      std::vector<Value> mine(params.begin() + long(next), params.begin() + long(next + leaves[k].size()));
      size_t at = 0;
      inner.pos[k] = rebuild(args.pos[k], mine, at, true);
      next += leaves[k].size();
    }
  // A variable assigned in the function would leave a value of this function behind.
  s.variables().bar_assignments();
  try {
    out.result = s.call_value(callee, inner);
    std::vector<int32_t> ids;
    for (const Value& r : results(out.result)) ids.push_back(s.materialize(r, args.span));
    s.fn().results = ids;
  } catch (...) {
    s.variables().unbar_assignments();
    s.set_builder(parent);
    throw;
  }
  s.variables().unbar_assignments();
  s.set_builder(parent);
  for (const auto& [param, outer] : builder->captures) out.inputs.push_back(Value(outer));
  return out;
}

// Calls graph function `fn` with `inputs`; the values of its results.
std::vector<Value> call_node(Stager& s, int32_t fn, const std::vector<Value>& inputs, SourceSpan span) {
  ir::Node node;
  node.kind = ir::NodeKind::kCall;
  node.functions = {fn};
  node.span = span;
  for (const Value& v : inputs) node.inputs.push_back(s.materialize(v, span));
  std::vector<ir::Type> types;
  for (int32_t r : s.module().functions[size_t(fn)].results)
    types.push_back(s.module().functions[size_t(fn)].values[size_t(r)].type);
  std::vector<Value> out;
  for (ir::Type& t : types) {
    const int32_t id = s.fn().add_value(std::move(t), "", span);
    node.outputs.push_back(id);
    out.push_back(s.staged(id));
  }
  s.fn().nodes.push_back(std::move(node));
  return out;
}

std::vector<int64_t> argnums_of(Stager& s, const Value& v, SourceSpan span, bool& is_tuple) {
  std::vector<int64_t> out;
  is_tuple = v.is<TuplePtr>() || v.is<ListPtr>();
  if (v.is<int64_t>()) return {v.as<int64_t>()};
  if (is_tuple) {
    for (const Value& item : s.to_list(v, span)) {
      if (!item.is<int64_t>()) s.fail(span, "argnums must be an int or a tuple of ints");
      out.push_back(item.as<int64_t>());
    }
    if (out.empty()) s.fail(span, "argnums must name at least one argument");
    return out;
  }
  s.fail(span, "argnums must be an int or a tuple of ints, got " + type_name(v));
}

Value transform(Stager& s, const Args& a, const std::string& name, TransformV::Kind kind) {
  BoundArgs b(s, a, "sg." + name, {"fun", "argnums", "has_aux"}, 1);
  TransformV t;
  t.kind = kind;
  t.fn = std::make_shared<Value>(b[0]);
  if (b.has(1)) t.argnums = argnums_of(s, b[1], a.span, t.argnums_tuple);
  if (b.has(2)) t.has_aux = s.truth(b[2], a.span, "has_aux");
  return Value(t);
}

// The leaves of a differentiated argument must be float tensors.
void check_float_leaves(Stager& s, const Value& arg, int64_t k, const std::string& fn, SourceSpan span) {
  std::vector<Value> leaves;
  flatten(arg, leaves, true);
  for (const Value& leaf : leaves) {
    if (leaf.is<double>()) continue;
    const DType d = s.tensor_dtype(leaf);
    if (!is_float_dtype(d))
      s.fail(span, fn + ": argument " + std::to_string(k) + " holds a " + dtype_name(d) +
                       " tensor, which has no gradient; differentiate with respect to float values (cast it with "
                       ".astype(sg.f32)), or pass it as an argument not in argnums");
  }
  if (leaves.empty())
    s.fail(span, fn + ": argument " + std::to_string(k) + " (" + type_name(arg) + ") holds no float tensor to differentiate");
}

Value call_grad(Stager& s, const TransformV& t, Args& args) {
  const std::string fn = t.kind == TransformV::Kind::kGrad ? "sg.grad" : "sg.value_and_grad";
  std::vector<bool> diff(args.pos.size(), false);
  for (int64_t k : t.argnums) {
    const int64_t i = k < 0 ? k + int64_t(args.pos.size()) : k;
    if (i < 0 || i >= int64_t(args.pos.size()))
      s.fail(args.span, fn + ": argnums names argument " + std::to_string(k) + " but the function was called with " +
                            std::to_string(args.pos.size()) + " positional arguments");
    diff[size_t(i)] = true;
    check_float_leaves(s, args.pos[size_t(i)], k, fn, i < int64_t(args.pos_spans.size()) ? args.pos_spans[size_t(i)] : args.span);
  }
  Value aux_tmpl;
  DType value_dtype = DType::kF32;
  const StagedFn f = stage_apart(s, *t.fn, args, diff, "grad", [&](const Value& r) {
    Value value = r;
    if (t.has_aux) {
      if (!r.is<TuplePtr>() || r.as<TuplePtr>()->size() != 2)
        s.fail(args.span, fn + "(..., has_aux=True): the function must return a pair (value, aux), got " + type_name(r));
      value = (*r.as<TuplePtr>())[0];
      aux_tmpl = (*r.as<TuplePtr>())[1];
    }
    if (value.is<double>()) value = s.to_tensor(value, DType::kF32, args.span);
    if (!value.is_tensor())
      s.fail(args.span, fn + " needs the function to return a scalar float tensor; it returned " + type_name(value) +
                            (value.is<TuplePtr>() && !t.has_aux ? " (with an auxiliary result, pass has_aux=True)" : ""));
    const ir::Type vt = s.tensor_type(value);
    if (!vt.shape.empty() || !is_float_dtype(vt.dtype))
      s.fail(args.span, fn + " needs the function to return a scalar float; it returned " +
                            s.module().format_type(vt) +
                            (is_float_dtype(vt.dtype) ? ": reduce it to a scalar (sg.sum, sg.mean), or use sg.vjp for the "
                                                        "gradient of a non-scalar result"
                                                      : ": cast it with .astype(sg.f32)"));
    value_dtype = vt.dtype;
    std::vector<Value> out{value};
    flatten(aux_tmpl, out, false);
    return out;
  });
  const size_t naux = s.module().functions[size_t(f.fn)].results.size() - 1;
  VjpRequest r;
  r.fn = f.fn;
  r.diff_params.assign(f.inputs.size(), false);
  for (size_t k = 0; k < f.num_leaves; ++k) r.diff_params[k] = true;
  r.ct_results.assign(1 + naux, false);
  r.ct_results[0] = true;
  r.keep_primal = true;
  const int32_t adj = vjp_function(s, r, args.span);
  std::vector<Value> inputs = f.inputs;
  inputs.push_back(s.to_tensor(Value(1.0), value_dtype, args.span));
  const std::vector<Value> out = call_node(s, adj, inputs, args.span);
  const Value value = out[0];
  std::vector<Value> aux_leaves(out.begin() + 1, out.begin() + 1 + long(naux));
  size_t at = 0;
  const Value aux = rebuild(aux_tmpl, aux_leaves, at, false);
  std::vector<Value> grads(out.begin() + 1 + long(naux), out.end());
  std::vector<Value> per_arg;
  for (int64_t k : t.argnums) {
    const size_t i = size_t(k < 0 ? k + int64_t(args.pos.size()) : k);
    // The leaves of argument i sit after those of the differentiated arguments before it.
    size_t pos = 0;
    for (size_t j = 0; j < i; ++j)
      if (diff[j]) {
        std::vector<Value> before;
        flatten(args.pos[j], before, true);
        pos += before.size();
      }
    per_arg.push_back(rebuild(args.pos[i], grads, pos, true));
  }
  const Value g = t.argnums_tuple ? make_tuple(per_arg) : per_arg[0];
  if (t.kind == TransformV::Kind::kGrad) return t.has_aux ? make_tuple({g, aux}) : g;
  const Value v = t.has_aux ? make_tuple({value, aux}) : value;
  return make_tuple({v, g});
}

Value call_vjp(Stager& s, Args& args) {
  if (args.pos.empty()) s.fail(args.span, "sg.vjp(fun, *primals) needs the function");
  if (!args.kw.empty()) s.fail(args.span, "sg.vjp takes no keyword arguments; use a lambda or a closure");
  const Value callee = args.pos[0];
  Args call = args;
  call.pos.erase(call.pos.begin());
  if (!call.pos_spans.empty()) call.pos_spans.erase(call.pos_spans.begin());
  for (size_t k = 0; k < call.pos.size(); ++k)
    check_float_leaves(s, call.pos[k], int64_t(k), "sg.vjp", k < call.pos_spans.size() ? call.pos_spans[k] : args.span);
  auto data = std::make_shared<PullbackData>();
  const StagedFn f = stage_apart(s, callee, call, std::vector<bool>(call.pos.size(), true), "vjp", [&](const Value& r) {
    std::vector<Value> leaves;
    flatten(r, leaves, true);
    for (Value& leaf : leaves)
      if (leaf.is<double>()) leaf = s.to_tensor(leaf, DType::kF32, args.span);
    return leaves;
  });
  data->forward = f.fn;
  data->inputs = f.inputs;
  data->num_leaves = f.num_leaves;
  data->primals = call.pos;
  data->out = f.result;
  const ir::Function& g = s.module().functions[size_t(f.fn)];
  for (int32_t r : g.results) data->float_out.push_back(is_float_dtype(g.values[size_t(r)].type.dtype));
  const std::vector<Value> outs = call_node(s, f.fn, f.inputs, args.span);
  size_t at = 0;
  const Value out = rebuild(f.result, outs, at, true);
  TransformV pb;
  pb.kind = TransformV::Kind::kPullback;
  pb.pullback = data;
  return make_tuple({out, Value(pb)});
}

Value call_pullback(Stager& s, const TransformV& t, Args& args) {
  PullbackData& d = *t.pullback;
  if (args.pos.size() != 1 || !args.kw.empty())
    s.fail(args.span, "the pullback of sg.vjp takes one argument: a cotangent of the function's result's structure");
  std::vector<Value> cts;
  flatten(args.pos[0], cts, true);
  const ir::Function& g = s.module().functions[size_t(d.forward)];
  if (cts.size() != g.results.size())
    s.fail(args.span, "the pullback of sg.vjp takes a cotangent with " + std::to_string(g.results.size()) +
                          " tensors, the result's structure; got " + std::to_string(cts.size()));
  std::vector<Value> inputs = d.inputs;
  for (size_t k = 0; k < cts.size(); ++k) {
    if (!d.float_out[k]) continue;
    const ir::Type want = g.values[size_t(g.results[k])].type;
    Value ct = s.to_tensor(cts[k], want.dtype, args.span);
    const ir::Type have = s.tensor_type(ct);
    if (have.rank() != want.rank())
      s.fail(args.span, "the pullback's cotangent " + std::to_string(k) + " is " + s.module().format_type(have) +
                            " but the result is " + s.module().format_type(want));
    inputs.push_back(ct);
  }
  if (d.adjoint < 0) {
    VjpRequest r;
    r.fn = d.forward;
    r.diff_params.assign(d.inputs.size(), false);
    for (size_t k = 0; k < d.num_leaves; ++k) r.diff_params[k] = true;
    r.ct_results = d.float_out;
    r.keep_primal = false;
    d.adjoint = vjp_function(s, r, args.span);
  }
  const std::vector<Value> grads = call_node(s, d.adjoint, inputs, args.span);
  std::vector<Value> per;
  size_t at = 0;
  for (const Value& p : d.primals) per.push_back(rebuild(p, grads, at, true));
  return make_tuple(per);
}

Value call_checkpoint(Stager& s, const TransformV& t, Args& args) {
  const StagedFn f = stage_apart(s, *t.fn, args, std::vector<bool>(args.pos.size(), true), "checkpoint",
                                 [&](const Value& r) {
                                   std::vector<Value> leaves;
                                   flatten(r, leaves, false);
                                   return leaves;
                                 });
  s.differentiation().set_checkpoint_segment(f.fn, t.segment);
  const std::vector<Value> outs = call_node(s, f.fn, f.inputs, args.span);
  size_t at = 0;
  return rebuild(f.result, outs, at, false);
}

Value stop_gradient(Stager& s, const Value& v, SourceSpan span) {
  if (v.is<Staged>()) {
    ops::Attrs attrs;
    attrs.values.push_back(ops::AttrValue::Int(int64_t(s.tensor_dtype(v))));
    const Value r = s.apply(ops::OpId::Cast, std::move(attrs), {v}, span);
    if (r.is<Staged>()) s.differentiation().stop_gradient_at(r.as<Staged>().fn, r.as<Staged>().id);
    return r;
  }
  std::vector<Value> leaves;
  flatten(v, leaves, false);
  if (leaves.empty() || v.is<StaticTensorPtr>()) return v;
  for (Value& leaf : leaves) leaf = stop_gradient(s, leaf, span);
  size_t at = 0;
  return rebuild(v, leaves, at, false);
}

Value sg_call(Stager& s, const std::string& name, std::vector<Value> pos, SourceSpan span,
              std::vector<std::pair<std::string, Value>> kw = {}) {
  Args a;
  a.pos = std::move(pos);
  a.kw = std::move(kw);
  a.span = span;
  return s.call_sg(name, a);
}

Value logsumexp(Stager& s, const Value& x_in, const Value& axis, bool keepdims, SourceSpan span) {
  const Value x = s.to_tensor(x_in, std::nullopt, span);
  const Value m = stop_gradient(s, sg_call(s, "max", {x}, span, {{"axis", axis}, {"keepdims", Value(true)}}), span);
  // An all -inf (or +inf) slice keeps its max out of the subtraction.
  const Value finite = sg_call(s, "where", {s.compare(CmpOp::kEq, m, m, span), m, Value(0.0)}, span);
  const Value safe = sg_call(s, "where", {sg_call(s, "isnan", {s.binary(BinOp::kSub, finite, finite, span)}, span),
                                          Value(0.0), finite}, span);
  const Value shifted = sg_call(s, "exp", {s.binary(BinOp::kSub, x, safe, span)}, span);
  const Value total = sg_call(s, "sum", {shifted}, span, {{"axis", axis}, {"keepdims", Value(true)}});
  Value r = s.binary(BinOp::kAdd, s.apply(ops::OpId::Log, {}, {total}, span), safe, span);
  if (!keepdims) {
    if (axis.is<NoneV>()) return sg_call(s, "reshape", {r, make_tuple({})}, span);
    r = sg_call(s, "squeeze", {r, axis}, span);
  }
  return r;
}

// softplus(y) = log(1 + exp(y)) = relu(y) + log(1 + exp(-|y|)): finite for any y.
Value softplus(Stager& s, const Value& y, SourceSpan span) {
  const Value neg_abs = s.unary(UnaryOp::kNeg, s.apply(ops::OpId::Abs, {}, {y}, span), span);
  const Value tail = s.apply(ops::OpId::Log, {}, {s.binary(BinOp::kAdd, Value(1.0), s.apply(ops::OpId::Exp, {}, {neg_abs}, span), span)}, span);
  return s.binary(BinOp::kAdd, s.apply(ops::OpId::Relu, {}, {y}, span), tail, span);
}

// The node of the current function that defines `v`, or null.
const ir::Node* defining_node(Stager& s, const Value& v) {
  if (!v.is<Staged>() || !s.builder() || v.as<Staged>().fn != s.builder()->fn) return nullptr;
  const int32_t id = v.as<Staged>().id;
  const std::vector<ir::Node>& nodes = s.fn().nodes;
  for (size_t n = nodes.size(); n > 0; --n)
    for (int32_t o : nodes[n - 1].outputs)
      if (o == id) return &nodes[n - 1];
  return nullptr;
}

bool is_constant_one(Stager& s, int32_t id) {
  const ir::Value& v = s.fn().values[size_t(id)];
  if (v.constant < 0) return false;
  const ir::Constant& c = s.module().constants[size_t(v.constant)];
  if (c.dtype != DType::kF32 || c.bytes.size() != 4) return false;
  float f;
  std::memcpy(&f, c.bytes.data(), 4);
  return f == 1.0f;
}

Value nn_loss(Stager& s, const std::string& f, Args& a) {
  const std::string fn = "sg.nn." + f;
  if (f == "cross_entropy") {
    BoundArgs b(s, a, fn, {"logits", "labels"}, 2);
    const Value logits = b[0];
    if (!logits.is_tensor() || s.tensor_rank(logits) < 1) s.fail(a.span, fn + ": logits must be a tensor [..., C]");
    const Value lsm = sg_call(s, "log_softmax", {logits}, a.span, {{"axis", Value(int64_t(-1))}});
    Value target = b[1];
    if (!target.is_tensor()) s.fail(a.span, fn + ": labels must be a tensor");
    if (!is_float_dtype(s.tensor_dtype(target))) {
      const ir::Type lt = s.tensor_type(logits);
      const auto c = lt.shape.back().as_static();
      if (!c) s.fail(a.span, fn + ": the number of classes (the logits' last dim) must be static");
      if (s.tensor_rank(target) + 1 != lt.rank())
        s.fail(a.span, fn + ": integer labels must have the logits' shape without its last dim; labels are " +
                           s.module().format_type(s.tensor_type(target)) + ", logits " + s.module().format_type(lt));
      target = sg_call(s, "one_hot", {target, Value(*c)}, a.span, {{"dtype", Value(DTypeV{lt.dtype})}});
    }
    const Value picked = sg_call(s, "sum", {s.binary(BinOp::kMul, target, lsm, a.span)}, a.span,
                                 {{"axis", Value(int64_t(-1))}});
    return s.unary(UnaryOp::kNeg, sg_call(s, "mean", {picked}, a.span), a.span);
  }
  if (f == "binary_cross_entropy_with_logits") {
    BoundArgs b(s, a, fn, {"logits", "targets"}, 2);
    const Value x = b[0], t = b[1];
    // max(x, 0) - x*t + log(1 + exp(-|x|))
    const Value soft = sg_call(s, "log", {s.binary(BinOp::kAdd, Value(1.0),
                                                   sg_call(s, "exp", {s.unary(UnaryOp::kNeg, sg_call(s, "abs", {x}, a.span), a.span)}, a.span),
                                                   a.span)},
                               a.span);
    const Value l = s.binary(BinOp::kAdd, s.binary(BinOp::kSub, sg_call(s, "relu", {x}, a.span), s.binary(BinOp::kMul, x, t, a.span), a.span),
                             soft, a.span);
    return sg_call(s, "mean", {l}, a.span);
  }
  if (f == "mse" || f == "l1") {
    BoundArgs b(s, a, fn, {"pred", "target"}, 2);
    const Value d = s.binary(BinOp::kSub, b[0], b[1], a.span);
    return sg_call(s, "mean", {f == "mse" ? s.binary(BinOp::kMul, d, d, a.span) : sg_call(s, "abs", {d}, a.span)}, a.span);
  }
  // sg.nn re-exports the op library's neural-network ops.
  return s.call_sg(f, a);
}

}  // namespace

Value Differentiation::call_transform(const TransformV& t, Args& args) {
  switch (t.kind) {
    case TransformV::Kind::kGrad:
    case TransformV::Kind::kValueAndGrad: return call_grad(s_, t, args);
    case TransformV::Kind::kCheckpoint: return call_checkpoint(s_, t, args);
    case TransformV::Kind::kPullback: return call_pullback(s_, t, args);
  }
  s_.fail(args.span, "internal error: unknown function transform");
}

std::optional<Value> Differentiation::stable_log(const Value& x, SourceSpan span) {
  const ir::Node* node = defining_node(s_, x);
  if (!node || node->kind != ir::NodeKind::kOp) return std::nullopt;
  const ir::Node n = *node;  // apply() below may grow the node list
  auto input = [&](size_t k) { return s_.staged(n.inputs[k]); };
  switch (n.op) {
    case ops::OpId::Softmax:
      s_.explain(span, "log(softmax(x))", "rewritten to log_softmax(x), which cannot overflow or take log(0)");
      return s_.apply(ops::OpId::LogSoftmax, n.attrs, {input(0)}, span);
    case ops::OpId::Sigmoid:
      s_.explain(span, "log(sigmoid(x))", "rewritten to -softplus(-x), finite for any x");
      return s_.unary(UnaryOp::kNeg, softplus(s_, s_.unary(UnaryOp::kNeg, input(0), span), span), span);
    case ops::OpId::Sum: {
      const ir::Node* e = defining_node(s_, input(0));
      if (!e || e->kind != ir::NodeKind::kOp || e->op != ops::OpId::Exp) return std::nullopt;
      const Value y = s_.staged(e->inputs[0]);
      std::vector<Value> axes;
      for (int64_t a : n.attrs.ints(0)) axes.push_back(Value(a));
      s_.explain(span, "log(sum(exp(x)))", "rewritten to logsumexp(x), which subtracts the max first");
      return logsumexp(s_, y, axes.empty() ? Value() : make_tuple(axes), n.attrs.i(1) != 0, span);
    }
    case ops::OpId::Add: {
      for (size_t k = 0; k < 2; ++k) {
        if (!is_constant_one(s_, n.inputs[k])) continue;
        const ir::Node* e = defining_node(s_, input(1 - k));
        if (!e || e->kind != ir::NodeKind::kOp || e->op != ops::OpId::Exp) continue;
        const Value y = s_.staged(e->inputs[0]);
        s_.explain(span, "log(1 + exp(x))", "rewritten to softplus(x) = relu(x) + log(1 + exp(-|x|)), finite for any x");
        return softplus(s_, y, span);
      }
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

Value Differentiation::call_sg(const std::string& name, Args& args) {
  if (name == "grad") return transform(s_, args, name, TransformV::Kind::kGrad);
  if (name == "value_and_grad") return transform(s_, args, name, TransformV::Kind::kValueAndGrad);
  if (name == "vjp") return call_vjp(s_, args);
  if (name == "checkpoint") {
    BoundArgs b(s_, args, "sg.checkpoint", {"fun", "segment"}, 1);
    TransformV t;
    t.kind = TransformV::Kind::kCheckpoint;
    t.fn = std::make_shared<Value>(b[0]);
    if (b.has(1) && !b[1].is<NoneV>()) {
      if (!b[1].is<int64_t>() || b[1].as<int64_t>() < 1)
        s_.fail(args.span, "sg.checkpoint's segment must be a positive int known when the program is compiled "
                           "(the iterations between the states a loop keeps), or None for about sqrt(T) of them");
      t.segment = b[1].as<int64_t>();
    }
    return Value(t);
  }
  if (name == "stop_gradient") {
    BoundArgs b(s_, args, "sg.stop_gradient", {"x"}, 1);
    return stop_gradient(s_, b[0], args.span);
  }
  if (name == "logsumexp") {
    BoundArgs b(s_, args, "sg.logsumexp", {"x", "axis", "keepdims"}, 1);
    return logsumexp(s_, b[0], b.get(1, Value()), b.has(2) && s_.truth(b[2], args.span, "keepdims"), args.span);
  }
  if (name == "nn") s_.fail(args.span, "sg.nn is a module; call one of its functions (sg.nn.cross_entropy, ...)");
  if (name.rfind("nn.", 0) == 0) return nn_loss(s_, name.substr(3), args);
  s_.fail(args.span, "module 'stagegraph' has no function '" + name + "'");
}

Value Stager::call_sg_grad(const std::string& name, Args& args) { return differentiation().call_sg(name, args); }

std::optional<Value> Stager::stable_log(const Value& x, SourceSpan span) { return differentiation().stable_log(x, span); }

void Differentiation::copy_stopped_gradients(int32_t from, int32_t to) {
  for (const auto& [fn, v] : std::set<std::pair<int32_t, int32_t>>(stopped_gradients_))
    if (fn == from) stopped_gradients_.insert({to, v});
}

const Value* Differentiation::custom_vjp(const std::string& op) const {
  auto it = custom_vjps_.find(op);
  return it == custom_vjps_.end() ? nullptr : &it->second;
}

}  // namespace sg::compiler::staging
