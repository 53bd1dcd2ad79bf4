// Reverse-mode differentiation of staged graph functions: see autodiff.h.
#include "staging/autodiff.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>
#include <string>
#include <utility>

#include "staging/stager.h"

namespace sg::compiler::staging {
namespace {

using ops::OpId;
using Grads = std::vector<std::optional<Value>>;


ops::Attrs ints_attr(std::vector<int64_t> v) {
  ops::Attrs a;
  a.values.push_back(ops::AttrValue::Ints(std::move(v)));
  return a;
}

// The While widened to keep what its backward reads (DESIGN.md #14).
struct Tape {
  int32_t count = -1;               // iterations run (i64 scalar), in the new function
  std::vector<int32_t> taped;       // body values kept per iteration (ids in the body)
  std::vector<int32_t> stacks;      // one tape per taped value, [T, ...], in the new function
  // Carried lists the body appends to (concatenate(list, item) on axis 0): the
  // value an iteration starts from is a prefix of the final list, as long as the
  // list was then plus the iteration's index, so no tape is needed.
  std::vector<size_t> appended;
  std::vector<int32_t> start_lengths;  // the list's length before the loop (i64)
  std::vector<bool> mask;           // the carried positions differentiated
  int32_t adjoint = -1;             // the body's adjoint (recomputes its forward)
  // Where the body's backward could be split from its forward: the function that
  // runs the backward alone from the values it reads (body ids), kept per iteration.
  int32_t backward = -1;
  std::vector<int32_t> backward_reads;
  std::map<int32_t, size_t> shifted;  // body value -> the tape (index into taped) read one on
};

// Ops a loop's backward recomputes from what it has rather than keep per iteration.
bool cheap_to_recompute(ops::OpId op) {
  switch (op) {
    case ops::OpId::Slice: case ops::OpId::Take: case ops::OpId::ExpandDims: case ops::OpId::Squeeze:
    case ops::OpId::Reshape: case ops::OpId::Cast: case ops::OpId::ShapeDim:
      return true;
    default:
      return false;
  }
}

// Whether body result j appends to parameter j: concatenate(param_j, item) on axis 0.
bool appends_to(const ir::Function& body, size_t j) {
  for (const ir::Node& n : body.nodes)
    if (n.kind == ir::NodeKind::kOp && n.op == ops::OpId::Concatenate && n.outputs[0] == body.results[j])
      return n.attrs.i(0) == 0 && n.inputs.size() == 2 && n.inputs[0] == body.params[j];
  return false;
}

class Vjp {
 public:
  Vjp(Stager& s, SourceSpan span) : s_(s), call_span_(span) {}

  int32_t build(const VjpRequest& r);

 private:
  // The adjoint of a branch, loop body or callee: every float parameter gets a
  // gradient, every float result a cotangent, no primal results. Memoized, so
  // the adjoint of a recursive function calls itself.
  int32_t nested(int32_t f, const std::vector<bool>& params, const std::vector<bool>& results);
  // Which results of function f depend on its parameters that `params` marks.
  std::vector<bool> active_results(int32_t f, const std::vector<bool>& params);
  // The carried positions of a loop body that depend on those `params` marks,
  // through any number of iterations.
  std::vector<bool> loop_mask(int32_t body, std::vector<bool> params);
  // Per input of `node` from `first` on: a float value that depends on a differentiated one.
  std::vector<bool> active_inputs(const ir::Node& node, size_t first);

  // ---- per function being built ------------------------------------------------
  struct Work {
    ir::Function src;
    int32_t src_id = -1;
    std::vector<int32_t> map;               // src value -> new value
    std::map<int32_t, Value> ct;            // src value -> cotangent
    std::vector<bool> active;               // depends on a differentiated parameter
    std::map<size_t, Tape> tapes;           // node index -> its widened While
  };
  Work* w_ = nullptr;

  int32_t remap(int32_t id);
  Value fwd(int32_t src_id) { return s_.staged(remap(src_id)); }
  void accumulate(int32_t src_id, const Value& g);
  std::optional<Value> ct_of(int32_t src_id) const {
    auto it = w_->ct.find(src_id);
    if (it == w_->ct.end()) return std::nullopt;
    return it->second;
  }
  Value ct_or_zeros(int32_t src_id) {
    if (auto c = ct_of(src_id)) return *c;
    return zeros_like(fwd(src_id));
  }
  void copy_forward(size_t index, const ir::Node& node);
  void widen_while(size_t index, const ir::Node& node);
  void backward(size_t index, const ir::Node& node);
  void backward_if(const ir::Node& node);
  void backward_call(const ir::Node& node);
  void backward_while(size_t index, const ir::Node& node);
  Grads op_rule(const ir::Node& node);
  Grads elementwise_rule(const ir::Node& node, const std::vector<Value>& in, const Value& out, const Value& g);
  Grads reduction_rule(const ir::Node& node, const std::vector<Value>& in, const Value& out, const Value& g);
  Grads shape_rule(const ir::Node& node, const std::vector<Value>& in, const Value& out, const Value& g);
  Grads nn_rule(const ir::Node& node, const std::vector<Value>& in, const Value& out, const Value& g);

  // A function with `types` as parameters (and nothing else yet).
  int32_t new_function(const std::string& name, const std::vector<ir::Type>& types);
  // A copy of function f with parameters of `extra` types appended.
  int32_t clone_with_params(int32_t f, const std::string& name, const std::vector<ir::Type>& extra);
  // Copies function f's nodes into the current function with its parameters bound to
  // `args`; the ids of its results. (A loop body's backward inlined into the reverse
  // loop: what reads only invariants, a weight's transpose, is hoisted out of it.)
  std::vector<int32_t> inline_function(int32_t f, const std::vector<int32_t>& args);
  // Adds a control node to the current function; its outputs have `types`.
  std::vector<int32_t> emit(ir::NodeKind kind, std::vector<int32_t> fns, std::vector<int32_t> inputs,
                            const std::vector<ir::Type>& types);
  std::vector<int32_t> ids(const std::vector<Value>& vs) {
    std::vector<int32_t> out;
    for (const Value& v : vs) out.push_back(s_.materialize(v, span_));
    return out;
  }
  ir::Type type_of(int32_t f, int32_t v) const { return s_.module().functions[size_t(f)].values[size_t(v)].type; }

  // ---- op helpers (at span_) -----------------------------------------------------
  Value bin(OpId op, const Value& a, const Value& b) { return s_.tensor_binary(op, a, b, span_); }
  Value un(OpId op, const Value& a) { return s_.apply(op, {}, {a}, span_); }
  Value mul(const Value& a, const Value& b) { return bin(OpId::Mul, a, b); }
  Value add(const Value& a, const Value& b) { return bin(OpId::Add, a, b); }
  Value sub(const Value& a, const Value& b) { return bin(OpId::Sub, a, b); }
  Value div(const Value& a, const Value& b) { return bin(OpId::Div, a, b); }
  Value neg(const Value& a) { return un(OpId::Neg, a); }
  Value zeros_like(const Value& x) { return call("zeros_like", {x}); }
  Value where(const Value& c, const Value& a, const Value& b) {
    return s_.apply(OpId::Where, {}, {c, s_.to_tensor(a, s_.tensor_dtype(b.is_tensor() ? b : a), span_),
                                      s_.to_tensor(b, s_.tensor_dtype(a.is_tensor() ? a : b), span_)},
                    span_);
  }
  Value sum(const Value& x, std::vector<int64_t> axes, bool keepdims) {
    ops::Attrs a = ints_attr(std::move(axes));
    a.values.push_back(ops::AttrValue::Int(keepdims));
    return s_.apply(OpId::Sum, std::move(a), {x}, span_);
  }
  Value call(const std::string& name, std::vector<Value> pos) {
    Args a;
    a.pos = std::move(pos);
    a.span = span_;
    return s_.call_sg(name, a);
  }
  Value transpose(const Value& x, std::vector<int64_t> perm) { return s_.apply(OpId::Transpose, ints_attr(std::move(perm)), {x}, span_); }
  Value expand(const Value& x, std::vector<int64_t> axes) { return s_.apply(OpId::ExpandDims, ints_attr(std::move(axes)), {x}, span_); }
  Value squeeze(const Value& x, std::vector<int64_t> axes) { return s_.apply(OpId::Squeeze, ints_attr(std::move(axes)), {x}, span_); }
  Value reshape_like(const Value& x, const Value& like) { return call("reshape", {x, s_.shape_tuple(like, span_)}); }
  Value broadcast_like(const Value& x, const Value& like) { return call("broadcast_to", {x, s_.shape_tuple(like, span_)}); }
  size_t rank(const Value& v) { return s_.tensor_rank(v); }
  // Sums a cotangent down to the shape of `x` it was broadcast from.
  Value unbroadcast(const Value& g, const Value& x);
  // The cotangent of a reduction's input: g (keepdims or not) broadcast back.
  Value unreduce(const Value& g, const Value& x, const std::vector<int64_t>& axes, bool keepdims);
  std::vector<int64_t> all_axes(size_t n) {
    std::vector<int64_t> a(n);
    std::iota(a.begin(), a.end(), 0);
    return a;
  }
  Value swap_last(const Value& x) {
    std::vector<int64_t> perm = all_axes(rank(x));
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    return transpose(x, perm);
  }
  Grads matmul_rule(const Value& a, const Value& b, const Value& g);
  // The gradient of a gather along the last axis of a row-wise permutation or
  // selection: g [..., k] scattered to [..., n] at `idx` [..., k].
  Value scatter_last(const Value& g, const Value& idx, const Value& like);
  Value take_rule(const Value& x, const Value& idx, const Value& g, int64_t axis);
  // Convolution and pooling adjoints, composed from the forward ops (conv_grad.cc's
  // kernels are the forward kernels on rearranged operands).
  Grads conv_rule(const ir::Node& node, const Value& x, const Value& w, const Value& g);
  Value pool_rule(const ir::Node& node, const Value& x, const Value& out, const Value& g);
  struct Window {
    int64_t h = 0, w = 0, kh = 0, kw = 0, sh = 1, sw = 1, dh = 1, dw = 1, oh = 0, ow = 0;
    int64_t top = 0, bottom = 0, left = 0, right = 0;  // padding
  };
  Window window(const ir::Node& node, const Value& x, int64_t kh, int64_t kw, const std::vector<int64_t>& stride,
                const std::vector<int64_t>& dilation, const std::string& padding);
  // x sliced per axis: (begin, end, step) with end -1 for "to the end".
  Value slice(const Value& x, const std::vector<std::array<int64_t, 3>>& axes);
  Value pad_spatial(const Value& x, int64_t top, int64_t bottom, int64_t left, int64_t right, double value);
  // Inserts s - 1 zeros between the items of axis 1 (rows) or 2 (columns) of an NHWC tensor.
  Value dilate(const Value& x, int64_t axis, int64_t s);
  [[noreturn]] void refuse(const std::string& what);

  Stager& s_;
  SourceSpan call_span_;
  SourceSpan span_;
  std::map<std::tuple<int32_t, std::vector<bool>, std::vector<bool>>, int32_t> memo_;
  // Per adjoint built: where its forward copy ends, and body value -> adjoint value.
  struct Built {
    size_t forward_nodes = 0;
    size_t source_params = 0;
    std::vector<int32_t> map;
  };
  std::map<int32_t, Built> built_;
  // The backward of loop body `body`'s adjoint `adj` as a function of its own, over
  // the forward values it reads (the residuals), when the forward part has no loop
  // or call and every residual has the same shape each iteration.
  struct Split {
    int32_t fn = -1;
    std::vector<int32_t> reads;  // body value ids, one per leading parameter of fn
    // Reads that are what the body hands to the next iteration at carried position
    // j, while the value it starts from there is read too: the same tape, one on.
    std::map<int32_t, size_t> shifted;  // body value -> carried position
  };
  std::optional<Split> split_backward(int32_t adj, int32_t body);
  // The empty tape [0, dims...] for body value `v` of `body`, dims read off the
  // loop's inputs; nullopt where a dim cannot be found.
  std::optional<Value> empty_tape(const ir::Function& body, const ir::Node& node, const ir::Type& t);
};

[[noreturn]] void Vjp::refuse(const std::string& what) {
  s_.fail(span_.valid() ? span_ : call_span_, "cannot differentiate " + what);
}

int32_t Vjp::new_function(const std::string& name, const std::vector<ir::Type>& types) {
  ir::Module& m = s_.module();
  m.functions.push_back(ir::Function{});
  const int32_t id = int32_t(m.functions.size() - 1);
  m.functions.back().name = name + "#" + std::to_string(id);
  for (const ir::Type& t : types) {
    const int32_t v = m.functions.back().add_value(t, "", call_span_);
    m.functions.back().params.push_back(v);
  }
  return id;
}

int32_t Vjp::clone_with_params(int32_t f, const std::string& name, const std::vector<ir::Type>& extra) {
  ir::Module& m = s_.module();
  ir::Function copy = m.functions[size_t(f)];
  copy.name = name;
  for (const ir::Type& t : extra) copy.params.push_back(copy.add_value(t, "", call_span_));
  m.functions.push_back(std::move(copy));
  const int32_t id = int32_t(m.functions.size() - 1);
  m.functions.back().name += "#" + std::to_string(id);
  return id;
}

std::vector<int32_t> Vjp::emit(ir::NodeKind kind, std::vector<int32_t> fns, std::vector<int32_t> inputs,
                               const std::vector<ir::Type>& types) {
  ir::Node node;
  node.kind = kind;
  node.functions = std::move(fns);
  node.inputs = std::move(inputs);
  node.span = span_;
  for (const ir::Type& t : types) node.outputs.push_back(s_.fn().add_value(t, "", span_));
  std::vector<int32_t> out = node.outputs;
  s_.fn().nodes.push_back(std::move(node));
  return out;
}

std::vector<int32_t> Vjp::inline_function(int32_t f, const std::vector<int32_t>& args) {
  const ir::Function src = s_.module().functions[size_t(f)];
  std::vector<int32_t> map(src.values.size(), -1);
  for (size_t k = 0; k < src.params.size(); ++k) map[size_t(src.params[k])] = args[k];
  auto id = [&](int32_t v) {
    if (map[size_t(v)] < 0) {  // a constant, or a value defined below
      s_.fn().values.push_back(src.values[size_t(v)]);
      map[size_t(v)] = int32_t(s_.fn().values.size() - 1);
    }
    return map[size_t(v)];
  };
  for (ir::Node node : src.nodes) {
    for (int32_t& i : node.inputs) i = id(i);
    for (int32_t& o : node.outputs) o = id(o);
    s_.fn().nodes.push_back(std::move(node));
  }
  std::vector<int32_t> out;
  for (int32_t r : src.results) out.push_back(id(r));
  return out;
}

int32_t Vjp::remap(int32_t id) {
  int32_t& slot = w_->map[size_t(id)];
  if (slot >= 0) return slot;
  const ir::Value& v = w_->src.values[size_t(id)];
  if (v.constant < 0)
    s_.fail(call_span_, "internal error: differentiating '" + w_->src.name + "' met value " + std::to_string(id) +
                            " before its definition");
  s_.fn().values.push_back(v);
  slot = int32_t(s_.fn().values.size() - 1);
  return slot;
}

void Vjp::accumulate(int32_t src_id, const Value& g) {
  auto it = w_->ct.find(src_id);
  if (it == w_->ct.end()) {
    w_->ct.emplace(src_id, g);
    return;
  }
  it->second = add(it->second, g);
}

Value Vjp::unbroadcast(const Value& g, const Value& x) {
  const ir::Type gt = s_.tensor_type(g), xt = s_.tensor_type(x);
  Value r = g;
  const size_t lead = gt.rank() - xt.rank();
  std::vector<int64_t> ones;
  for (size_t i = 0; i < xt.rank(); ++i) {
    const auto xs = xt.shape[i].as_static();
    const auto gs = gt.shape[lead + i].as_static();
    if (xs && *xs == 1 && !(gs && *gs == 1)) ones.push_back(int64_t(lead + i));
  }
  if (!ones.empty()) r = sum(r, ones, true);
  if (lead > 0) r = sum(r, all_axes(lead), false);
  if (s_.tensor_dtype(r) != xt.dtype) r = s_.cast(r, xt.dtype, span_);
  return r;
}

Value Vjp::unreduce(const Value& g, const Value& x, const std::vector<int64_t>& axes, bool keepdims) {
  Value r = g;
  std::vector<int64_t> ax = axes.empty() ? all_axes(rank(x)) : axes;
  if (!keepdims && !ax.empty()) r = expand(r, ax);
  return broadcast_like(r, x);
}

Grads Vjp::matmul_rule(const Value& a, const Value& b, const Value& g) {
  const size_t ra = rank(a), rb = rank(b);
  Value a2 = ra == 1 ? expand(a, {0}) : a;
  Value b2 = rb == 1 ? expand(b, {1}) : b;
  Value g2 = g;
  if (ra == 1 && rb == 1) g2 = expand(g, {0, 1});
  else if (ra == 1) g2 = expand(g, {int64_t(rank(g) - 1)});  // [.., N] -> [.., 1, N]
  else if (rb == 1) g2 = expand(g, {int64_t(rank(g))});      // [.., M] -> [.., M, 1]
  Value ga = s_.apply(OpId::MatMul, {}, {g2, swap_last(b2)}, span_);
  Value gb = s_.apply(OpId::MatMul, {}, {swap_last(a2), g2}, span_);
  ga = unbroadcast(ga, a2);
  gb = unbroadcast(gb, b2);
  if (ra == 1) ga = squeeze(ga, {0});
  if (rb == 1) gb = squeeze(gb, {1});
  return {ga, gb};
}

Value Vjp::scatter_last(const Value& g, const Value& idx, const Value& like) {
  const ir::Type lt = s_.tensor_type(like);
  const auto n = lt.shape.back().as_static();
  if (!n) refuse("an ordering op over an axis of symbolic size");
  ops::Attrs oh;
  oh.values.push_back(ops::AttrValue::Int(*n));
  oh.values.push_back(ops::AttrValue::Int(int64_t(lt.dtype)));
  const Value onehot = s_.apply(OpId::OneHot, std::move(oh), {idx}, span_);  // [..., k, n]
  const Value row = expand(g, {int64_t(rank(g) - 1)});                      // [..., 1, k]
  const Value r = s_.apply(OpId::MatMul, {}, {row, onehot}, span_);        // [..., 1, n]
  return squeeze(r, {int64_t(rank(r) - 2)});
}

Value Vjp::take_rule(const Value& x, const Value& idx, const Value& g, int64_t axis) {
  const ir::Type xt = s_.tensor_type(x);
  const size_t k = rank(idx);
  if (k == 0) {  // a single index: the cotangent lands in one slice
    std::vector<int64_t> b(xt.rank(), 0), e(xt.rank(), 0), st(xt.rank(), 1), fl(xt.rank(), 0);
    fl[size_t(axis)] = ops::attr::kIndex | ops::attr::kDynBegin;
    ops::Attrs attrs;
    attrs.values = {ops::AttrValue::Ints(b), ops::AttrValue::Ints(e), ops::AttrValue::Ints(st), ops::AttrValue::Ints(fl)};
    return s_.apply(OpId::SliceUpdate, std::move(attrs), {zeros_like(x), g, s_.cast(idx, DType::kI64, span_)}, span_);
  }
  // Every other index tensor: scatter-add (in f32), repeated indices accumulating.
  ops::Attrs attrs;
  attrs.values.push_back(ops::AttrValue::Int(axis));
  const Value target = s_.cast(x, DType::kF32, span_);
  const Value sum = s_.apply(OpId::ScatterAdd, std::move(attrs), {target, idx, s_.cast(g, DType::kF32, span_)}, span_);
  return s_.cast(sum, xt.dtype, span_);
}

Value Vjp::slice(const Value& x, const std::vector<std::array<int64_t, 3>>& axes) {
  const size_t n = axes.size();
  std::vector<int64_t> b(n, 0), e(n, 0), st(n, 1), fl(n, 0);
  for (size_t i = 0; i < n; ++i) {
    b[i] = axes[i][0];
    st[i] = axes[i][2];
    fl[i] = st[i] > 0 ? int64_t(ops::attr::kHasBegin) : 0;  // a negative step starts at the end
    if (axes[i][1] >= 0) {
      e[i] = axes[i][1];
      fl[i] |= ops::attr::kHasEnd;
    }
  }
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints(b), ops::AttrValue::Ints(e), ops::AttrValue::Ints(st), ops::AttrValue::Ints(fl)};
  return s_.apply(OpId::Slice, std::move(attrs), {x}, span_);
}

Value Vjp::pad_spatial(const Value& x, int64_t top, int64_t bottom, int64_t left, int64_t right, double value) {
  if (top == 0 && bottom == 0 && left == 0 && right == 0) return x;
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints({0, 0, top, bottom, left, right, 0, 0}), ops::AttrValue::Float(value),
                  ops::AttrValue::String("constant")};
  return s_.apply(OpId::Pad, std::move(attrs), {x}, span_);
}

Value Vjp::dilate(const Value& x, int64_t axis, int64_t s) {
  if (s == 1) return x;
  // [N, A, B, C] -> [N, A, 1, B, C] (rows) padded to s along the new axis, merged, and cut.
  const ir::Type t = s_.tensor_type(x);
  const Value e = expand(x, {axis + 1});
  std::vector<int64_t> pads(10, 0);
  pads[size_t(2 * (axis + 1) + 1)] = s - 1;
  ops::Attrs attrs;
  attrs.values = {ops::AttrValue::Ints(pads), ops::AttrValue::Float(0.0), ops::AttrValue::String("constant")};
  const Value padded = s_.apply(OpId::Pad, std::move(attrs), {e}, span_);
  const int64_t len = *t.shape[size_t(axis)].as_static();
  std::vector<Value> shape;
  for (size_t i = 0; i < 4; ++i)
    shape.push_back(int64_t(i) == axis ? Value(len * s) : s_.shape_item(x, int64_t(i), span_));
  const Value merged = call("reshape", {padded, make_tuple(shape)});
  std::vector<std::array<int64_t, 3>> axes(4, {0, -1, 1});
  axes[size_t(axis)] = {0, (len - 1) * s + 1, 1};
  return slice(merged, axes);
}

Vjp::Window Vjp::window(const ir::Node& node, const Value& x, int64_t kh, int64_t kw,
                        const std::vector<int64_t>& stride, const std::vector<int64_t>& dilation,
                        const std::string& padding) {
  const ir::Type t = s_.tensor_type(x);
  const auto h = t.shape[1].as_static(), w = t.shape[2].as_static();
  if (!h || !w) refuse(std::string("through sg.") + ops::op_def(node.op).name + " over a symbolic height or width");
  Window win;
  win.h = *h;
  win.w = *w;
  win.kh = kh;
  win.kw = kw;
  win.sh = stride[0];
  win.sw = stride[1];
  win.dh = dilation[0];
  win.dw = dilation[1];
  const auto extent = [](int64_t k, int64_t d) { return (k - 1) * d + 1; };
  if (padding == "SAME") {
    win.oh = (win.h + win.sh - 1) / win.sh;
    win.ow = (win.w + win.sw - 1) / win.sw;
    const int64_t ph = std::max<int64_t>((win.oh - 1) * win.sh + extent(kh, win.dh) - win.h, 0);
    const int64_t pw = std::max<int64_t>((win.ow - 1) * win.sw + extent(kw, win.dw) - win.w, 0);
    win.top = ph / 2;
    win.bottom = ph - win.top;
    win.left = pw / 2;
    win.right = pw - win.left;
  } else {
    win.oh = (win.h - extent(kh, win.dh)) / win.sh + 1;
    win.ow = (win.w - extent(kw, win.dw)) / win.sw + 1;
  }
  return win;
}

Grads Vjp::conv_rule(const ir::Node& node, const Value& x, const Value& w, const Value& g) {
  const ops::Attrs& at = node.attrs;
  if (at.i(3) != 1) refuse("through sg.conv2d with groups > 1 yet");
  const ir::Type wt = s_.tensor_type(w);
  const auto kh = wt.shape[0].as_static(), kw = wt.shape[1].as_static();
  if (!kh || !kw) refuse("through sg.conv2d with a filter of symbolic size");
  const Window win = window(node, x, *kh, *kw, at.ints(0), at.ints(1), at.s(2));
  const int64_t hp = win.h + win.top + win.bottom, wp = win.w + win.left + win.right;
  auto conv = [&](const Value& a, const Value& b, std::vector<int64_t> stride, std::vector<int64_t> dilation) {
    ops::Attrs attrs;
    attrs.values = {ops::AttrValue::Ints(std::move(stride)), ops::AttrValue::Ints(std::move(dilation)),
                    ops::AttrValue::String("VALID"), ops::AttrValue::Int(1)};
    return s_.apply(OpId::Conv2D, std::move(attrs), {a, b}, span_);
  };
  Grads r(2);
  if (w_->active[size_t(node.inputs[1])]) {
    // dW[i, j, c, o] = sum over n, p, q of xp[n, p*sh + i*dh, q*sw + j*dw, c] * g[n, p, q, o]:
    // a convolution of xp as [C, Hp, Wp, N] with g as the filter [Ho, Wo, N, O],
    // strided by the dilation and dilated by the stride.
    const Value xp = pad_spatial(x, win.top, win.bottom, win.left, win.right, 0.0);
    const Value dw = conv(transpose(xp, {3, 1, 2, 0}), transpose(g, {1, 2, 0, 3}), {win.dh, win.dw}, {win.sh, win.sw});
    r[1] = transpose(slice(dw, {{0, -1, 1}, {0, *kh, 1}, {0, *kw, 1}, {0, -1, 1}}), {1, 2, 0, 3});
  }
  if (w_->active[size_t(node.inputs[0])]) {
    // dxp = the full correlation of g, dilated by the stride, with the filter
    // flipped and its channels swapped; rows and columns past the last window get none.
    const Value gd = dilate(dilate(g, 1, win.sh), 2, win.sw);
    const int64_t eh = (*kh - 1) * win.dh, ew = (*kw - 1) * win.dw;
    const Value gp = pad_spatial(gd, eh, eh, ew, ew, 0.0);
    const Value wf = transpose(slice(w, {{0, -1, -1}, {0, -1, -1}, {0, -1, 1}, {0, -1, 1}}), {0, 1, 3, 2});
    Value dxp = conv(gp, wf, {1, 1}, {win.dh, win.dw});
    const int64_t used_h = (win.oh - 1) * win.sh + eh + 1, used_w = (win.ow - 1) * win.sw + ew + 1;
    dxp = pad_spatial(dxp, 0, hp - used_h, 0, wp - used_w, 0.0);
    r[0] = slice(dxp, {{0, -1, 1}, {win.top, win.top + win.h, 1}, {win.left, win.left + win.w, 1}, {0, -1, 1}});
  }
  return r;
}

Value Vjp::pool_rule(const ir::Node& node, const Value& x, const Value& out, const Value& g) {
  const ops::Attrs& at = node.attrs;
  const std::vector<int64_t>& size = at.ints(0);
  const Window win = window(node, x, size[0], size[1], at.ints(1), {1, 1}, at.s(2));
  const bool is_max = node.op == OpId::MaxPool2D;
  const DType dt = s_.tensor_dtype(x);
  const Value xp = is_max ? pad_spatial(x, win.top, win.bottom, win.left, win.right,
                                        -std::numeric_limits<double>::infinity())
                          : x;
  Value share = g;
  if (!is_max) {  // each output's cotangent is shared by the window's cells inside the input
    auto counts = std::make_shared<StaticTensor>();
    counts->dtype = DType::kF32;
    counts->shape = {1, win.oh, win.ow, 1};
    for (int64_t p = 0; p < win.oh; ++p)
      for (int64_t q = 0; q < win.ow; ++q) {
        const int64_t r0 = std::max<int64_t>(p * win.sh - win.top, 0), r1 = std::min(p * win.sh - win.top + win.kh, win.h);
        const int64_t c0 = std::max<int64_t>(q * win.sw - win.left, 0), c1 = std::min(q * win.sw - win.left + win.kw, win.w);
        const float inv = 1.0f / float((r1 - r0) * (c1 - c0));
        const auto* bytes = reinterpret_cast<const uint8_t*>(&inv);
        counts->bytes.insert(counts->bytes.end(), bytes, bytes + sizeof inv);
      }
    share = mul(g, s_.cast(Value(StaticTensorPtr(counts)), dt, span_));
  }
  Value dxp = zeros_like(pad_spatial(x, win.top, win.bottom, win.left, win.right, 0.0));
  Value taken = is_max ? zeros_like(g) : Value();
  for (int64_t i = 0; i < win.kh; ++i)
    for (int64_t j = 0; j < win.kw; ++j) {
      const std::vector<std::array<int64_t, 3>> cells = {
          {0, -1, 1}, {i, i + (win.oh - 1) * win.sh + 1, win.sh}, {j, j + (win.ow - 1) * win.sw + 1, win.sw}, {0, -1, 1}};
      Value part = share;
      if (is_max) {
        // The window's first maximal cell, in row-major order, takes the cotangent.
        const Value hit = s_.cast(bin(OpId::Equal, slice(xp, cells), out), dt, span_);
        const Value first = mul(hit, sub(Value(1.0), taken));
        taken = add(taken, first);
        part = mul(g, first);
      }
      const size_t n = 4;
      std::vector<int64_t> b(n, 0), e(n, 0), st(n, 1), fl(n, 0);
      for (size_t a = 0; a < n; ++a) {
        b[a] = cells[a][0];
        st[a] = cells[a][2];
        fl[a] = ops::attr::kHasBegin;
        if (cells[a][1] >= 0) {
          e[a] = cells[a][1];
          fl[a] |= ops::attr::kHasEnd;
        }
      }
      ops::Attrs attrs;
      attrs.values = {ops::AttrValue::Ints(b), ops::AttrValue::Ints(e), ops::AttrValue::Ints(st), ops::AttrValue::Ints(fl)};
      const Value sum_here = add(slice(dxp, cells), part);
      dxp = s_.apply(OpId::SliceUpdate, std::move(attrs), {dxp, sum_here}, span_);
    }
  return slice(dxp, {{0, -1, 1}, {win.top, win.top + win.h, 1}, {win.left, win.left + win.w, 1}, {0, -1, 1}});
}

// Elementwise ops and casts: the cotangent times the derivative, summed back
// over broadcast dims.
Grads Vjp::elementwise_rule(const ir::Node& node, const std::vector<Value>& in, const Value& out, const Value& g) {
  const Value& x = in.empty() ? out : in[0];
  const ops::Attrs& at = node.attrs;
  Grads r(in.size());
  (void)x;
  (void)at;
  switch (node.op) {
    case OpId::Add: return {unbroadcast(g, in[0]), unbroadcast(g, in[1])};
    case OpId::Sub: return {unbroadcast(g, in[0]), unbroadcast(neg(g), in[1])};
    case OpId::Mul: return {unbroadcast(mul(g, in[1]), in[0]), unbroadcast(mul(g, in[0]), in[1])};
    case OpId::Div:
      return {unbroadcast(div(g, in[1]), in[0]), unbroadcast(neg(div(mul(g, out), in[1])), in[1])};
    case OpId::Pow: {
      r[0] = unbroadcast(mul(g, mul(in[1], bin(OpId::Pow, in[0], sub(in[1], Value(1.0))))), in[0]);
      if (w_->active[size_t(node.inputs[1])]) {
        const Value pos = bin(OpId::Greater, in[0], Value(0.0));
        const Value safe = where(pos, in[0], Value(1.0));
        r[1] = unbroadcast(mul(g, mul(out, un(OpId::Log, safe))), in[1]);
      }
      return r;
    }
    case OpId::Maximum:
    case OpId::Minimum: {
      const Value pick_a = bin(node.op == OpId::Maximum ? OpId::GreaterEqual : OpId::LessEqual, in[0], in[1]);
      return {unbroadcast(where(pick_a, g, Value(0.0)), in[0]), unbroadcast(where(pick_a, Value(0.0), g), in[1])};
    }
    case OpId::Neg: return {neg(g)};
    case OpId::Abs: return {mul(g, un(OpId::Sign, x))};
    case OpId::Exp: return {mul(g, out)};
    case OpId::Log: return {div(g, x)};
    case OpId::Sqrt: return {div(mul(g, Value(0.5)), out)};
    case OpId::Rsqrt: return {mul(g, mul(Value(-0.5), div(out, x)))};
    case OpId::Sin: return {mul(g, un(OpId::Cos, x))};
    case OpId::Cos: return {neg(mul(g, un(OpId::Sin, x)))};
    case OpId::Tanh: return {mul(g, sub(Value(1.0), mul(out, out)))};
    case OpId::Sigmoid: return {mul(g, mul(out, sub(Value(1.0), out)))};
    case OpId::Relu: return {where(bin(OpId::Greater, x, Value(0.0)), g, Value(0.0))};
    case OpId::Gelu: {
      // d/dx x·Φ(x) = Φ(x) + x·φ(x); Φ(x) = gelu(x)/x (1/2 at 0).
      const Value zero = bin(OpId::Equal, x, Value(0.0));
      const Value cdf = where(zero, Value(0.5), div(out, where(zero, Value(1.0), x)));
      const Value pdf = mul(un(OpId::Exp, mul(mul(x, x), Value(-0.5))), Value(0.3989422804014327));
      return {mul(g, add(cdf, mul(x, pdf)))};
    }
    case OpId::Square: return {mul(g, mul(x, Value(2.0)))};
    case OpId::Floor:
    case OpId::Ceil:
    case OpId::Round:
    case OpId::Sign: return {std::nullopt};
    case OpId::Where:
      return {std::nullopt, unbroadcast(where(in[0], g, Value(0.0)), in[1]), unbroadcast(where(in[0], Value(0.0), g), in[2])};
    case OpId::Clip: {
      const Value inside = bin(OpId::LogicalAnd, bin(OpId::GreaterEqual, x, in[1]), bin(OpId::LessEqual, x, in[2]));
      r[0] = unbroadcast(where(inside, g, Value(0.0)), in[0]);
      if (w_->active[size_t(node.inputs[1])]) r[1] = unbroadcast(where(bin(OpId::Less, x, in[1]), g, Value(0.0)), in[1]);
      if (w_->active[size_t(node.inputs[2])]) r[2] = unbroadcast(where(bin(OpId::Greater, x, in[2]), g, Value(0.0)), in[2]);
      return r;
    }
    case OpId::Cast:
      if (!is_float(s_.tensor_dtype(x))) return {std::nullopt};
      return {s_.cast(g, s_.tensor_dtype(x), span_)};
    default:
      return r;
  }
}

// Reductions, orderings, normalizations and matmul.
Grads Vjp::reduction_rule(const ir::Node& node, const std::vector<Value>& in, const Value& out, const Value& g) {
  const Value& x = in.empty() ? out : in[0];
  const ops::Attrs& at = node.attrs;
  Grads r(in.size());
  (void)x;
  (void)at;
  switch (node.op) {
    case OpId::Sum: return {unreduce(g, x, at.ints(0), at.i(1) != 0)};
    case OpId::Mean: {
      std::vector<int64_t> ax = at.ints(0).empty() ? all_axes(rank(x)) : at.ints(0);
      Value count = Value(int64_t(1));
      for (int64_t a : ax) count = s_.binary(BinOp::kMul, count, s_.shape_item(x, a, span_), span_);
      return {div(unreduce(g, x, ax, at.i(1) != 0), count)};
    }
    case OpId::Max:
    case OpId::Min: {
      std::vector<int64_t> ax = at.ints(0).empty() ? all_axes(rank(x)) : at.ints(0);
      const bool keep = at.i(1) != 0;
      const Value m = keep ? out : expand(out, ax);
      const Value mask = s_.cast(bin(OpId::Equal, x, m), s_.tensor_dtype(x), span_);
      const Value ties = sum(mask, ax, true);
      return {mul(mask, div(unreduce(g, x, ax, keep), ties))};
    }
    case OpId::Prod: {
      std::vector<int64_t> ax = at.ints(0).empty() ? all_axes(rank(x)) : at.ints(0);
      const bool keep = at.i(1) != 0;
      return {div(mul(unreduce(g, x, ax, keep), unreduce(out, x, ax, keep)), x)};
    }
    case OpId::MatMul: return matmul_rule(in[0], in[1], g);
    case OpId::Softmax: {
      const int64_t axis = at.i(0);
      return {mul(out, sub(g, sum(mul(g, out), {axis}, true)))};
    }
    case OpId::LogSoftmax: {
      const int64_t axis = at.i(0);
      return {sub(g, mul(un(OpId::Exp, out), sum(g, {axis}, true)))};
    }
    case OpId::LayerNorm: {
      const int64_t last = int64_t(rank(x) - 1);
      const double eps = at.f(0);
      const Value mu = s_.apply(OpId::Mean, [&] { ops::Attrs a = ints_attr({last}); a.values.push_back(ops::AttrValue::Int(1)); return a; }(), {x}, span_);
      const Value xc = sub(x, mu);
      ops::Attrs ma = ints_attr({last});
      ma.values.push_back(ops::AttrValue::Int(1));
      const Value var = s_.apply(OpId::Mean, ma, {mul(xc, xc)}, span_);
      const Value rstd = un(OpId::Rsqrt, add(var, Value(eps)));
      const Value xhat = mul(xc, rstd);
      const Value dxhat = mul(g, in[1]);
      const Value m1 = s_.apply(OpId::Mean, ma, {dxhat}, span_);
      const Value m2 = s_.apply(OpId::Mean, ma, {mul(dxhat, xhat)}, span_);
      r[0] = mul(rstd, sub(sub(dxhat, m1), mul(xhat, m2)));
      if (w_->active[size_t(node.inputs[1])]) r[1] = unbroadcast(mul(g, xhat), in[1]);
      if (w_->active[size_t(node.inputs[2])]) r[2] = unbroadcast(g, in[2]);
      return r;
    }
    case OpId::CumSum: {
      const int64_t axis = at.i(0);
      const size_t n = rank(x);
      std::vector<int64_t> b(n, 0), e(n, 0), st(n, 1), fl(n, 0);
      st[size_t(axis)] = -1;
      ops::Attrs flip;
      flip.values = {ops::AttrValue::Ints(b), ops::AttrValue::Ints(e), ops::AttrValue::Ints(st), ops::AttrValue::Ints(fl)};
      const Value rev = s_.apply(OpId::Slice, flip, {g}, span_);
      const Value cs = s_.apply(OpId::CumSum, at, {rev}, span_);
      return {s_.apply(OpId::Slice, flip, {cs}, span_)};
    }
    case OpId::Sort: {
      const int64_t axis = at.i(0);
      if (axis != int64_t(rank(x)) - 1) refuse("sg.sort along an axis other than the last");
      const Value idx = s_.apply(OpId::ArgSort, at, {x}, span_);
      return {scatter_last(g, idx, x)};
    }
    case OpId::TopK: {
      if (at.i(1) != int64_t(rank(x)) - 1) refuse("sg.topk along an axis other than the last");
      return {scatter_last(g, fwd(node.outputs[1]), x)};
    }
    default:
      return r;
  }
}

// Shape ops, indexing and gathers: the cotangent moved back where it came from.
Grads Vjp::shape_rule(const ir::Node& node, const std::vector<Value>& in, const Value& out, const Value& g) {
  const Value& x = in.empty() ? out : in[0];
  const ops::Attrs& at = node.attrs;
  Grads r(in.size());
  (void)x;
  (void)at;
  switch (node.op) {
    case OpId::Reshape: r[0] = reshape_like(g, x); return r;
    case OpId::BroadcastTo: r[0] = unbroadcast(g, x); return r;
    case OpId::Transpose: {
      const std::vector<int64_t>& p = at.ints(0);
      std::vector<int64_t> inv(p.size());
      for (size_t i = 0; i < p.size(); ++i) inv[size_t(p[i])] = int64_t(i);
      return {transpose(g, inv)};
    }
    case OpId::ExpandDims: return {squeeze(g, at.ints(0))};
    case OpId::Squeeze: return {reshape_like(g, x)};
    case OpId::Concatenate: {
      const int64_t axis = at.i(0);
      Value begin = Value(int64_t(0));
      for (size_t k = 0; k < in.size(); ++k) {
        const Value len = s_.shape_item(in[k], axis, span_);
        const Value end = s_.binary(BinOp::kAdd, begin, len, span_);
        if (!w_->active[size_t(node.inputs[k])]) {
          begin = end;
          continue;
        }
        // g[:, ..., begin:end]
        const size_t n = rank(g);
        std::vector<int64_t> b(n, 0), e(n, 0), st(n, 1), fl(n, 0);
        std::vector<Value> dyn;
        int64_t& f = fl[size_t(axis)];
        if (auto bs = s_.known_dim(begin); bs && bs->as_static()) {
          b[size_t(axis)] = *bs->as_static();
          f |= ops::attr::kHasBegin;
        } else {
          f |= ops::attr::kDynBegin;
          dyn.push_back(s_.to_tensor(begin, DType::kI64, span_));
        }
        if (auto es = s_.known_dim(end); es && es->as_static()) {
          e[size_t(axis)] = *es->as_static();
          f |= ops::attr::kHasEnd;
        } else {
          f |= ops::attr::kDynEnd;
          dyn.push_back(s_.to_tensor(end, DType::kI64, span_));
        }
        ops::Attrs attrs;
        attrs.values = {ops::AttrValue::Ints(b), ops::AttrValue::Ints(e), ops::AttrValue::Ints(st), ops::AttrValue::Ints(fl)};
        std::vector<Value> ops_in{g};
        for (const Value& d : dyn) ops_in.push_back(d);
        r[k] = reshape_like(s_.apply(OpId::Slice, std::move(attrs), ops_in, span_), in[k]);
        begin = end;
      }
      return r;
    }
    case OpId::Slice: {
      std::vector<Value> ops_in{zeros_like(x), g};
      for (size_t k = 1; k < in.size(); ++k) ops_in.push_back(in[k]);
      r[0] = s_.apply(OpId::SliceUpdate, at, ops_in, span_);
      return r;
    }
    case OpId::SliceUpdate: {
      std::vector<Value> dyn(in.begin() + 2, in.end());
      // The region v was broadcast into gets no gradient from x.
      std::vector<Value> region_in{g};
      for (const Value& d : dyn) region_in.push_back(d);
      const Value region = s_.apply(OpId::Slice, at, region_in, span_);
      std::vector<Value> zin{g, s_.to_tensor(Value(0.0), s_.tensor_dtype(g), span_)};
      for (const Value& d : dyn) zin.push_back(d);
      r[0] = s_.apply(OpId::SliceUpdate, at, zin, span_);
      r[1] = unbroadcast(region, in[1]);
      return r;
    }
    case OpId::Take: {
      const int64_t axis = at.i(0);
      return {take_rule(x, in[1], g, axis), std::nullopt};
    }
    case OpId::Tile: {
      const std::vector<int64_t>& reps = at.ints(0);
      const ir::Type xt = s_.tensor_type(x);
      const size_t lead = reps.size() > xt.rank() ? reps.size() - xt.rank() : 0;
      std::vector<Value> split_shape;
      std::vector<int64_t> sum_axes;
      for (size_t i = 0; i < std::max(reps.size(), xt.rank()); ++i) {
        const int64_t rep = i + reps.size() >= std::max(reps.size(), xt.rank()) ? reps[i + reps.size() - std::max(reps.size(), xt.rank())] : 1;
        sum_axes.push_back(int64_t(split_shape.size()));
        split_shape.push_back(Value(rep));
        split_shape.push_back(i < lead ? Value(int64_t(1)) : s_.shape_item(x, int64_t(i - lead), span_));
      }
      const Value split = call("reshape", {g, make_tuple(split_shape)});
      return {reshape_like(sum(split, sum_axes, false), x)};
    }
    case OpId::Pad: {
      if (at.s(2) != "constant") refuse("sg.pad with mode '" + at.s(2) + "'");
      const std::vector<int64_t>& pads = at.ints(0);
      const size_t n = rank(x);
      std::vector<int64_t> b(n, 0), e(n, 0), st(n, 1), fl(n, 0);
      for (size_t i = 0; i < n; ++i) {
        b[i] = pads[2 * i];
        fl[i] = ops::attr::kHasBegin;
        if (pads[2 * i + 1] > 0) {
          e[i] = -pads[2 * i + 1];
          fl[i] |= ops::attr::kHasEnd;
        }
      }
      ops::Attrs attrs;
      attrs.values = {ops::AttrValue::Ints(b), ops::AttrValue::Ints(e), ops::AttrValue::Ints(st), ops::AttrValue::Ints(fl)};
      return {reshape_like(s_.apply(OpId::Slice, std::move(attrs), {g}, span_), x)};
    }
    default:
      return r;
  }
}

// Convolution, pooling and custom ops.
Grads Vjp::nn_rule(const ir::Node& node, const std::vector<Value>& in, const Value& out, const Value& g) {
  const Value& x = in.empty() ? out : in[0];
  const ops::Attrs& at = node.attrs;
  Grads r(in.size());
  (void)x;
  (void)at;
  switch (node.op) {
    case OpId::Custom: {
      auto rule = s_.custom_vjps.find(at.s(2));
      if (rule == s_.custom_vjps.end())
        refuse("through custom op '" + at.s(2) + "': declare it with sg.custom_op(..., vjp=...) to make it differentiable");
      Args args;
      args.span = span_;
      const size_t operands = size_t(at.i(3));
      for (size_t k = 0; k < operands; ++k) args.pos.push_back(in[k]);
      args.pos.push_back(out);
      args.pos.push_back(g);
      const Value cts = s_.call_value(rule->second, args);
      std::vector<Value> items = cts.is<TuplePtr>() || cts.is<ListPtr>() ? s_.to_list(cts, span_) : std::vector<Value>{cts};
      if (items.size() != operands)
        refuse("through custom op '" + at.s(2) + "': its vjp rule returned " + std::to_string(items.size()) +
               " cotangents for " + std::to_string(operands) + " operands");
      for (size_t k = 0; k < operands; ++k)
        if (!items[k].is<NoneV>()) r[k] = unbroadcast(s_.to_tensor(items[k], s_.tensor_dtype(in[k]), span_), in[k]);
      return r;
    }
    case OpId::Conv2D: return conv_rule(node, in[0], in[1], g);
    case OpId::MaxPool2D:
    case OpId::AvgPool2D: return {pool_rule(node, x, out, g)};
    default:
      return r;
  }
}

Grads Vjp::op_rule(const ir::Node& node) {
  std::vector<Value> in;
  for (int32_t i : node.inputs) in.push_back(fwd(i));
  const Value out = fwd(node.outputs[0]);
  const Value g = ct_or_zeros(node.outputs[0]);
  switch (node.op) {
    case OpId::Add: case OpId::Sub: case OpId::Mul: case OpId::Div: case OpId::Pow: case OpId::Maximum: case OpId::Minimum: case OpId::Neg: case OpId::Abs: case OpId::Exp: case OpId::Log: case OpId::Sqrt: case OpId::Rsqrt: case OpId::Sin: case OpId::Cos: case OpId::Tanh: case OpId::Sigmoid: case OpId::Relu: case OpId::Gelu: case OpId::Square: case OpId::Floor: case OpId::Ceil: case OpId::Round: case OpId::Sign: case OpId::Where: case OpId::Clip: case OpId::Cast:
      return elementwise_rule(node, in, out, g);
    case OpId::Sum: case OpId::Mean: case OpId::Max: case OpId::Min: case OpId::Prod: case OpId::CumSum: case OpId::Sort: case OpId::TopK: case OpId::Softmax: case OpId::LogSoftmax: case OpId::LayerNorm: case OpId::MatMul:
      return reduction_rule(node, in, out, g);
    case OpId::Reshape: case OpId::BroadcastTo: case OpId::Transpose: case OpId::ExpandDims: case OpId::Squeeze: case OpId::Concatenate: case OpId::Slice: case OpId::SliceUpdate: case OpId::Take: case OpId::Tile: case OpId::Pad:
      return shape_rule(node, in, out, g);
    case OpId::Custom: case OpId::Conv2D: case OpId::MaxPool2D: case OpId::AvgPool2D:
      return nn_rule(node, in, out, g);
    default:
      return Grads(in.size());  // no gradient: comparisons, integer and index ops, creation, random
  }
}

void Vjp::copy_forward(size_t index, const ir::Node& node) {
  (void)index;
  ir::Node copy = node;
  for (int32_t& i : copy.inputs) i = remap(i);
  for (int32_t& o : copy.outputs) {
    const int32_t id = s_.fn().add_value(w_->src.values[size_t(o)].type, w_->src.values[size_t(o)].name,
                                         w_->src.values[size_t(o)].span);
    w_->map[size_t(o)] = id;
    o = id;
  }
  s_.fn().nodes.push_back(std::move(copy));
}

std::optional<Vjp::Split> Vjp::split_backward(int32_t adj, int32_t body) {
  const Built info = built_.at(adj);
  const ir::Function a = s_.module().functions[size_t(adj)];
  const ir::Function& b = s_.module().functions[size_t(body)];
  for (size_t n = 0; n < info.forward_nodes; ++n)
    if (a.nodes[n].kind == ir::NodeKind::kWhile || a.nodes[n].kind == ir::NodeKind::kCall) return std::nullopt;
  std::map<int32_t, int32_t> body_of;  // adjoint value -> body value
  for (size_t v = 0; v < info.map.size(); ++v)
    if (info.map[v] >= 0) body_of[info.map[v]] = int32_t(v);
  std::set<int32_t> symbols;  // the dims a residual may have besides static ones
  for (int32_t p : b.params)
    for (const ir::Dim& d : b.values[size_t(p)].type.shape)
      if (auto sym = d.as_symbol()) symbols.insert(*sym);
  std::set<int32_t> later(a.params.begin() + long(info.source_params), a.params.end());  // cotangents
  for (size_t n = info.forward_nodes; n < a.nodes.size(); ++n)
    for (int32_t o : a.nodes[n].outputs) later.insert(o);
  Split split;
  std::map<int32_t, int32_t> local;  // adjoint value -> value of the split function
  std::vector<int32_t> residuals;
  auto read = [&](int32_t v) {
    if (later.count(v) || local.count(v) || a.values[size_t(v)].constant >= 0) return true;
    auto it = body_of.find(v);
    if (it == body_of.end()) return false;
    for (const ir::Dim& d : a.values[size_t(v)].type.shape)
      if (!d.as_static() && !(d.as_symbol() && symbols.count(*d.as_symbol()))) return false;
    local[v] = -1;
    residuals.push_back(v);
    split.reads.push_back(it->second);
    return true;
  };
  for (size_t n = info.forward_nodes; n < a.nodes.size(); ++n)
    for (int32_t i : a.nodes[n].inputs)
      if (!read(i)) return std::nullopt;
  for (int32_t r : a.results)
    if (!read(r)) return std::nullopt;
  // A cheap op (a slice, an index, a reshape, a cast) of what the backward has
  // anyway (loop invariants, other reads, scalars) is recomputed there instead of
  // kept per iteration: `xs[t]` keeps t, not a row of xs.
  std::set<int32_t> invariant;  // adjoint ids of the body's loop-invariant parameters
  for (size_t j = 0; j < b.params.size(); ++j)
    if (b.results[j] == b.params[j]) invariant.insert(a.params[j]);
  std::map<int32_t, size_t> def;  // adjoint value -> the forward node defining it
  for (size_t n = 0; n < info.forward_nodes; ++n)
    for (int32_t o : a.nodes[n].outputs) def[o] = n;
  std::set<size_t> remat;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t k = 0; k < residuals.size() && !changed; ++k) {
      auto d = def.find(residuals[k]);
      if (d == def.end()) continue;
      const ir::Node& n = a.nodes[d->second];
      if (n.kind != ir::NodeKind::kOp || n.outputs.size() != 1 || !cheap_to_recompute(n.op)) continue;
      bool free = true;
      for (int32_t i : n.inputs)
        free = free && (a.values[size_t(i)].constant >= 0 || invariant.count(i) || local.count(i) ||
                        a.values[size_t(i)].type.shape.empty());
      if (!free) continue;
      local.erase(residuals[k]);
      residuals.erase(residuals.begin() + long(k));
      split.reads.erase(split.reads.begin() + long(k));
      remat.insert(d->second);
      for (int32_t i : n.inputs)
        if (!read(i)) return std::nullopt;
      changed = true;
    }
  }
  for (size_t j = 0; j < b.params.size(); ++j) {
    if (b.results[j] == b.params[j]) continue;
    const bool start_read = std::find(split.reads.begin(), split.reads.end(), b.params[j]) != split.reads.end();
    const bool end_read = std::find(split.reads.begin(), split.reads.end(), b.results[j]) != split.reads.end();
    if (start_read && end_read && !split.shifted.count(b.results[j])) split.shifted[b.results[j]] = j;
  }
  std::vector<ir::Type> types;
  for (int32_t v : residuals) types.push_back(a.values[size_t(v)].type);
  for (size_t k = info.source_params; k < a.params.size(); ++k) types.push_back(a.values[size_t(a.params[k])].type);
  split.fn = new_function(b.name + ".backward", types);
  ir::Function& f = s_.module().functions[size_t(split.fn)];
  for (size_t k = 0; k < residuals.size(); ++k) local[residuals[k]] = f.params[k];
  for (size_t k = info.source_params; k < a.params.size(); ++k)
    local[a.params[k]] = f.params[residuals.size() + k - info.source_params];
  auto id = [&](int32_t v) {
    auto it = local.find(v);
    if (it != local.end() && it->second >= 0) return it->second;
    f.values.push_back(a.values[size_t(v)]);  // a constant, or a value defined below
    return local[v] = int32_t(f.values.size() - 1);
  };
  std::vector<size_t> order(remat.begin(), remat.end());
  for (size_t n = info.forward_nodes; n < a.nodes.size(); ++n) order.push_back(n);
  for (size_t n : order) {
    ir::Node node = a.nodes[n];
    for (int32_t& i : node.inputs) i = id(i);
    for (int32_t& o : node.outputs) o = id(o);
    f.nodes.push_back(std::move(node));
  }
  for (int32_t r : a.results) f.results.push_back(id(r));
  return split;
}

std::optional<Value> Vjp::empty_tape(const ir::Function& body, const ir::Node& node, const ir::Type& t) {
  std::vector<Value> dims{Value(int64_t(0))};
  for (const ir::Dim& d : t.shape) {
    if (auto n = d.as_static()) {
      dims.push_back(Value(*n));
      continue;
    }
    std::optional<Value> found;
    for (size_t j = 0; j < body.params.size() && !found; ++j) {
      const ir::Type& pt = body.values[size_t(body.params[j])].type;
      for (size_t axis = 0; axis < pt.rank() && !found; ++axis)
        if (pt.shape[axis] == d) found = s_.shape_item(fwd(node.inputs[j]), int64_t(axis), span_);
    }
    if (!found) return std::nullopt;
    dims.push_back(*found);
  }
  Args a;
  a.pos = {make_tuple(std::move(dims))};
  a.kw.emplace_back("dtype", Value(DTypeV{t.dtype}));
  a.span = span_;
  return s_.call_sg("zeros", a);
}

void Vjp::widen_while(size_t index, const ir::Node& node) {
  ir::Module& m = s_.module();
  const int32_t cond = node.functions[0], body = node.functions[1];
  const ir::Function b = m.functions[size_t(body)];
  Tape tape;
  tape.mask = loop_mask(body, active_inputs(node, 0));
  tape.adjoint = nested(body, tape.mask, tape.mask);
  std::set<int32_t> carried_reads;  // parameters read off the loop's inputs or outputs
  for (size_t j = 0; j < b.params.size(); ++j) {
    if (b.results[j] == b.params[j]) {
      carried_reads.insert(b.params[j]);  // loop-invariant: the backward reads the input
    } else if (appends_to(b, j)) {
      tape.appended.push_back(j);
      carried_reads.insert(b.params[j]);
    }
  }
  // The values to keep: those the body's backward reads where it splits from the
  // forward (no recomputation), else the carried values each iteration starts from.
  std::vector<int32_t> wanted;
  std::map<int32_t, size_t> shifted;  // body value -> carried position
  if (std::optional<Split> split = split_backward(tape.adjoint, body)) {
    tape.backward = split->fn;
    tape.backward_reads = split->reads;
    for (int32_t v : split->reads)
      if (!split->shifted.count(v)) wanted.push_back(v);
    shifted = split->shifted;
  } else {
    wanted = b.params;
  }
  std::vector<std::optional<Value>> empties;
  for (int32_t v : wanted) {
    if (carried_reads.count(v) || std::find(tape.taped.begin(), tape.taped.end(), v) != tape.taped.end()) continue;
    std::optional<Value> empty = empty_tape(b, node, b.values[size_t(v)].type);
    if (!empty) {  // a residual whose dims the loop's inputs do not show: recompute instead
      if (tape.backward >= 0) {
        tape.backward = -1;
        tape.backward_reads.clear();
        shifted.clear();
        tape.taped.clear();
        empties.clear();
        wanted = b.params;
        for (int32_t p : wanted) {
          if (carried_reads.count(p)) continue;
          tape.taped.push_back(p);
          empties.push_back(empty_tape(b, node, b.values[size_t(p)].type));
        }
        break;
      }
    }
    tape.taped.push_back(v);
    empties.push_back(empty);
  }
  std::vector<ir::Type> extra{ir::Type{DType::kI64, {}}};
  for (int32_t v : tape.taped) {
    ir::Type t = b.values[size_t(v)].type;
    t.shape.insert(t.shape.begin(), ir::Dim::symbol(m.symbols.fresh("T")));
    extra.push_back(t);
  }
  const int32_t cond2 = clone_with_params(cond, m.functions[size_t(cond)].name + ".taped", extra);
  const int32_t body2 = clone_with_params(body, b.name + ".taped", extra);
  {  // body2: count, and append each value kept to its tape
    FnBuilder bb;
    bb.fn = body2;
    FnBuilder* saved = s_.builder();
    s_.set_builder(&bb);
    const size_t np = b.params.size();
    const std::vector<int32_t> params = s_.fn().params;
    const Value n1 = add(s_.staged(params[np]), Value(int64_t(1)));
    std::vector<int32_t> results = s_.fn().results;
    results.push_back(s_.materialize(n1, span_));
    for (size_t k = 0; k < tape.taped.size(); ++k) {
      const Value item = expand(s_.staged(tape.taped[k]), {0});
      Args a;
      a.pos = {make_tuple({s_.staged(params[np + 1 + k]), item})};
      a.span = span_;
      const Value grown = s_.call_sg("concatenate", a);
      int32_t id = s_.materialize(grown, span_);
      s_.fn().values[size_t(id)].type = s_.fn().values[size_t(params[np + 1 + k])].type;
      results.push_back(id);
    }
    s_.fn().results = results;
    s_.set_builder(saved);
  }
  std::vector<int32_t> inputs;
  for (int32_t i : node.inputs) inputs.push_back(remap(i));
  inputs.push_back(s_.materialize(s_.to_tensor(Value(int64_t(0)), DType::kI64, span_), span_));
  for (size_t k = 0; k < tape.taped.size(); ++k) {
    if (!empties[k])
      refuse("through this loop: a value it carries has a dim that changes from one iteration to the next");
    inputs.push_back(s_.materialize(*empties[k], span_));
  }
  std::vector<ir::Type> types;
  for (int32_t o : node.outputs) types.push_back(w_->src.values[size_t(o)].type);
  for (const ir::Type& t : extra) types.push_back(t);
  for (size_t j : tape.appended)
    tape.start_lengths.push_back(s_.materialize(s_.to_tensor(s_.shape_item(fwd(node.inputs[j]), 0, span_), DType::kI64, span_), span_));
  const std::vector<int32_t> outs = emit(ir::NodeKind::kWhile, {cond2, body2}, inputs, types);
  for (size_t j = 0; j < node.outputs.size(); ++j) w_->map[size_t(node.outputs[j])] = outs[j];
  tape.count = outs[node.outputs.size()];
  for (size_t k = 0; k < tape.taped.size(); ++k) {
    tape.stacks.push_back(outs[node.outputs.size() + 1 + k]);
    s_.fn().values[size_t(tape.stacks.back())].name = "gradient tape";  // graph-run --profile reports them
  }
  // What the last iteration hands on closes the tape of the value each iteration
  // starts from: entry i + 1 is what iteration i ended with.
  std::set<size_t> closed;
  for (const auto& [v, j] : shifted) {
    const auto at = std::find(tape.taped.begin(), tape.taped.end(), b.params[j]);
    const size_t k = size_t(at - tape.taped.begin());
    tape.shifted[v] = k;
    if (!closed.insert(k).second) continue;
    Args a;
    a.pos = {make_tuple({s_.staged(tape.stacks[k]), expand(s_.staged(outs[j]), {0})})};
    a.span = span_;
    const int32_t id = s_.materialize(s_.call_sg("concatenate", a), span_);
    s_.fn().values[size_t(id)].type = s_.fn().values[size_t(tape.stacks[k])].type;
    tape.stacks[k] = id;
  }
  w_->tapes[index] = std::move(tape);
}

std::vector<bool> Vjp::active_results(int32_t f, const std::vector<bool>& params) {
  const ir::Function& fn = s_.module().functions[size_t(f)];
  std::vector<bool> act(fn.values.size(), false);
  for (size_t k = 0; k < fn.params.size(); ++k)
    act[size_t(fn.params[k])] = params[k] && is_float(fn.values[size_t(fn.params[k])].type.dtype);
  for (const ir::Node& node : fn.nodes) {
    bool any = false;
    for (int32_t i : node.inputs) any = any || act[size_t(i)];
    if (any)
      for (int32_t o : node.outputs)
        act[size_t(o)] = is_float(fn.values[size_t(o)].type.dtype) && !s_.stopped_gradients.count({f, o});
  }
  std::vector<bool> out;
  for (int32_t r : fn.results) out.push_back(act[size_t(r)]);
  return out;
}

std::vector<bool> Vjp::loop_mask(int32_t body, std::vector<bool> params) {
  for (;;) {
    const std::vector<bool> r = active_results(body, params);
    bool changed = false;
    for (size_t j = 0; j < params.size(); ++j)
      if (r[j] && !params[j]) params[j] = changed = true;
    if (!changed) return params;
  }
}

std::vector<bool> Vjp::active_inputs(const ir::Node& node, size_t first) {
  std::vector<bool> mask;
  for (size_t k = first; k < node.inputs.size(); ++k) {
    const int32_t v = node.inputs[k];
    mask.push_back(w_->active[size_t(v)] && is_float(w_->src.values[size_t(v)].type.dtype));
  }
  return mask;
}

// The adjoint of a control node: a node of the same kind over the adjoints of its
// functions, taking the node's inputs and the cotangents of `results`, giving the
// gradients of the inputs `params` marks (inputs from `first` on).
void Vjp::backward_if(const ir::Node& node) {
  const std::vector<bool> params = active_inputs(node, 1);
  std::vector<bool> results = active_results(node.functions[0], params);
  const std::vector<bool> other = active_results(node.functions[1], params);
  for (size_t k = 0; k < results.size(); ++k) results[k] = results[k] || other[k];
  std::vector<int32_t> inputs;
  for (int32_t i : node.inputs) inputs.push_back(remap(i));
  for (size_t k = 0; k < node.outputs.size(); ++k)
    if (results[k]) inputs.push_back(s_.materialize(ct_or_zeros(node.outputs[k]), span_));
  std::vector<ir::Type> types;
  std::vector<int32_t> grads_for;
  for (size_t k = 0; k < params.size(); ++k)
    if (params[k]) {
      types.push_back(w_->src.values[size_t(node.inputs[k + 1])].type);
      grads_for.push_back(node.inputs[k + 1]);
    }
  if (grads_for.empty()) return;
  const int32_t then_vjp = nested(node.functions[0], params, results);
  const int32_t else_vjp = nested(node.functions[1], params, results);
  const std::vector<int32_t> outs = emit(ir::NodeKind::kIf, {then_vjp, else_vjp}, inputs, types);
  for (size_t k = 0; k < outs.size(); ++k) accumulate(grads_for[k], s_.staged(outs[k]));
}

void Vjp::backward_call(const ir::Node& node) {
  const std::vector<bool> params = active_inputs(node, 0);
  const std::vector<bool> results = active_results(node.functions[0], params);
  std::vector<int32_t> inputs;
  for (int32_t i : node.inputs) inputs.push_back(remap(i));
  for (size_t k = 0; k < node.outputs.size(); ++k)
    if (results[k]) inputs.push_back(s_.materialize(ct_or_zeros(node.outputs[k]), span_));
  std::vector<ir::Type> types;
  std::vector<int32_t> grads_for;
  for (size_t k = 0; k < params.size(); ++k)
    if (params[k]) {
      types.push_back(w_->src.values[size_t(node.inputs[k])].type);
      grads_for.push_back(node.inputs[k]);
    }
  if (grads_for.empty()) return;
  const int32_t adj = nested(node.functions[0], params, results);
  const std::vector<int32_t> outs = emit(ir::NodeKind::kCall, {adj}, inputs, types);
  for (size_t k = 0; k < outs.size(); ++k) accumulate(grads_for[k], s_.staged(outs[k]));
}

void Vjp::backward_while(size_t index, const ir::Node& node) {
  ir::Module& m = s_.module();
  const Tape tape = w_->tapes.at(index);
  const ir::Function b = m.functions[size_t(node.functions[1])];
  const size_t np = b.params.size();
  std::vector<size_t> floats, invariant;
  for (size_t j = 0; j < np; ++j) {
    if (tape.mask[j]) floats.push_back(j);
    if (b.results[j] == b.params[j]) invariant.push_back(j);
  }
  if (floats.empty()) return;
  // Carried backwards: i, a cotangent per differentiated position, the tapes, the
  // invariants, the appended lists and their lengths before the loop.
  std::vector<int32_t> init;
  std::vector<ir::Type> types;
  init.push_back(tape.count);
  types.push_back(ir::Type{DType::kI64, {}});
  for (size_t j : floats) {
    init.push_back(s_.materialize(ct_or_zeros(node.outputs[j]), span_));
    types.push_back(w_->src.values[size_t(node.outputs[j])].type);
  }
  for (int32_t stack : tape.stacks) {
    init.push_back(stack);
    types.push_back(s_.fn().values[size_t(stack)].type);
  }
  for (size_t j : invariant) {
    init.push_back(remap(node.inputs[j]));
    types.push_back(w_->src.values[size_t(node.inputs[j])].type);
  }
  for (size_t k = 0; k < tape.appended.size(); ++k) {
    init.push_back(remap(node.outputs[tape.appended[k]]));
    types.push_back(w_->src.values[size_t(node.outputs[tape.appended[k]])].type);
    init.push_back(tape.start_lengths[k]);
    types.push_back(ir::Type{DType::kI64, {}});
  }
  const std::string base = b.name + ".reverse";
  const int32_t cond = new_function(base + ".cond", types);
  {
    FnBuilder cb;
    cb.fn = cond;
    FnBuilder* saved = s_.builder();
    s_.set_builder(&cb);
    const Value more = bin(OpId::Greater, s_.staged(s_.fn().params[0]), Value(int64_t(0)));
    s_.fn().results = {s_.materialize(more, span_)};
    s_.set_builder(saved);
  }
  const int32_t rbody = new_function(base, types);
  {
    FnBuilder rb;
    rb.fn = rbody;
    FnBuilder* saved = s_.builder();
    s_.set_builder(&rb);
    const std::vector<int32_t> p = s_.fn().params;
    const Value i1 = sub(s_.staged(p[0]), Value(int64_t(1)));
    std::map<int32_t, Value> state;  // body value -> its value in iteration i1
    const size_t tapes_at = 1 + floats.size();
    for (size_t k = 0; k < tape.taped.size(); ++k)
      state[tape.taped[k]] = s_.index_tensor_value(s_.staged(p[tapes_at + k]), i1, span_);
    for (const auto& [v, k] : tape.shifted)
      state[v] = s_.index_tensor_value(s_.staged(p[tapes_at + k]), add(i1, Value(int64_t(1))), span_);
    const size_t invariants_at = tapes_at + tape.taped.size();
    for (size_t k = 0; k < invariant.size(); ++k) state[b.params[invariant[k]]] = s_.staged(p[invariants_at + k]);
    const size_t lists_at = invariants_at + invariant.size();
    for (size_t k = 0; k < tape.appended.size(); ++k) {
      // list[:start_length + i]
      const Value final_list = s_.staged(p[lists_at + 2 * k]);
      const Value end = add(s_.staged(p[lists_at + 2 * k + 1]), i1);
      const size_t n = rank(final_list);
      std::vector<int64_t> zb(n, 0), ze(n, 0), st(n, 1), fl(n, 0);
      fl[0] = ops::attr::kDynEnd;
      ops::Attrs attrs;
      attrs.values = {ops::AttrValue::Ints(zb), ops::AttrValue::Ints(ze), ops::AttrValue::Ints(st), ops::AttrValue::Ints(fl)};
      state[b.params[tape.appended[k]]] = s_.apply(OpId::Slice, std::move(attrs), {final_list, end}, span_);
    }
    std::vector<int32_t> call_in;
    const std::vector<int32_t>& reads = tape.backward >= 0 ? tape.backward_reads : b.params;
    for (int32_t v : reads) call_in.push_back(s_.materialize(state.at(v), span_));
    for (size_t k = 0; k < floats.size(); ++k) call_in.push_back(p[1 + k]);
    const int32_t callee = tape.backward >= 0 ? tape.backward : tape.adjoint;
    const std::vector<int32_t> g = inline_function(callee, call_in);
    std::vector<int32_t> results{s_.materialize(i1, span_)};
    for (int32_t id : g) results.push_back(id);
    for (size_t k = tapes_at; k < p.size(); ++k) results.push_back(p[k]);
    s_.fn().results = results;
    s_.set_builder(saved);
  }
  const std::vector<int32_t> outs = emit(ir::NodeKind::kWhile, {cond, rbody}, init, types);
  for (size_t k = 0; k < floats.size(); ++k) {
    const int32_t in = node.inputs[floats[k]];
    if (w_->active[size_t(in)]) accumulate(in, s_.staged(outs[1 + k]));
  }
}

void Vjp::backward(size_t index, const ir::Node& node) {
  span_ = node.span;
  bool has_ct = false;
  for (int32_t o : node.outputs) has_ct = has_ct || w_->ct.count(o);
  if (!has_ct) return;
  switch (node.kind) {
    case ir::NodeKind::kIf: return backward_if(node);
    case ir::NodeKind::kCall: return backward_call(node);
    case ir::NodeKind::kWhile:
      if (w_->tapes.count(index)) backward_while(index, node);
      return;
    case ir::NodeKind::kOp: break;
  }
  const Grads g = op_rule(node);
  for (size_t k = 0; k < g.size() && k < node.inputs.size(); ++k) {
    const int32_t in = node.inputs[k];
    if (!g[k] || !w_->active[size_t(in)]) continue;
    accumulate(in, *g[k]);
  }
}

int32_t Vjp::nested(int32_t f, const std::vector<bool>& params, const std::vector<bool>& results) {
  const auto key = std::make_tuple(f, params, results);
  auto it = memo_.find(key);
  if (it != memo_.end()) return it->second;
  VjpRequest r;
  r.fn = f;
  r.keep_primal = false;
  r.diff_params = params;
  r.ct_results = results;
  return build(r);
}

int32_t Vjp::build(const VjpRequest& r) {
  Work work;
  work.src = s_.module().functions[size_t(r.fn)];
  work.src_id = r.fn;
  const ir::Function& src = work.src;
  std::vector<ir::Type> param_types;
  for (int32_t p : src.params) param_types.push_back(src.values[size_t(p)].type);
  for (size_t k = 0; k < src.results.size(); ++k)
    if (r.ct_results[k]) param_types.push_back(src.values[size_t(src.results[k])].type);
  const int32_t g = new_function(src.name + ".vjp", param_types);
  if (!r.keep_primal) memo_[std::make_tuple(r.fn, r.diff_params, r.ct_results)] = g;

  Work* saved_work = w_;
  FnBuilder* saved_builder = s_.builder();
  const SourceSpan saved_span = span_;
  w_ = &work;
  FnBuilder builder;
  builder.fn = g;
  s_.set_builder(&builder);

  work.map.assign(src.values.size(), -1);
  const std::vector<int32_t> params = s_.fn().params;
  for (size_t k = 0; k < src.params.size(); ++k) work.map[size_t(src.params[k])] = params[k];

  // Activity: values that depend on a differentiated parameter, through nodes
  // other than stop_gradient's.
  work.active.assign(src.values.size(), false);
  for (size_t k = 0; k < src.params.size(); ++k)
    if (r.diff_params[k] && is_float(src.values[size_t(src.params[k])].type.dtype))
      work.active[size_t(src.params[k])] = true;
  for (const ir::Node& node : src.nodes) {
    bool any = false;
    for (int32_t i : node.inputs) any = any || work.active[size_t(i)];
    if (!any) continue;
    for (int32_t o : node.outputs)
      work.active[size_t(o)] = is_float(src.values[size_t(o)].type.dtype) && !s_.stopped_gradients.count({r.fn, o});
  }
  // Usefulness: values a cotangent reaches.
  std::vector<bool> useful(src.values.size(), false);
  for (size_t k = 0; k < src.results.size(); ++k)
    if (r.ct_results[k]) useful[size_t(src.results[k])] = true;
  for (size_t n = src.nodes.size(); n > 0; --n) {
    const ir::Node& node = src.nodes[n - 1];
    bool any = false;
    for (int32_t o : node.outputs) any = any || useful[size_t(o)];
    if (any)
      for (int32_t i : node.inputs) useful[size_t(i)] = true;
  }

  // Forward.
  for (size_t n = 0; n < src.nodes.size(); ++n) {
    const ir::Node& node = src.nodes[n];
    span_ = node.span;
    if (!r.keep_primal && node.kind == ir::NodeKind::kOp && node.op == OpId::Print) continue;
    bool differentiated = false;
    for (int32_t o : node.outputs) differentiated = differentiated || (work.active[size_t(o)] && useful[size_t(o)]);
    if (node.kind == ir::NodeKind::kWhile && differentiated) widen_while(n, node);
    else copy_forward(n, node);
  }

  built_[g] = Built{s_.fn().nodes.size(), src.params.size(), work.map};

  // Backward.
  size_t next_ct = src.params.size();
  for (size_t k = 0; k < src.results.size(); ++k) {
    if (!r.ct_results[k]) continue;
    const int32_t res = src.results[k];
    const int32_t ct_param = params[next_ct++];
    if (work.active[size_t(res)]) accumulate(res, s_.staged(ct_param));
  }
  for (size_t n = src.nodes.size(); n > 0; --n) {
    const ir::Node& node = src.nodes[n - 1];
    bool needed = false;
    for (int32_t o : node.outputs) needed = needed || work.active[size_t(o)];
    if (needed) backward(n - 1, node);
  }

  span_ = call_span_;
  std::vector<int32_t> results;
  if (r.keep_primal)
    for (int32_t res : src.results) results.push_back(remap(res));
  for (size_t k = 0; k < src.params.size(); ++k) {
    if (!r.diff_params[k]) continue;
    const int32_t p = src.params[k];
    Value gv = ct_or_zeros(p);
    if (s_.tensor_dtype(gv) != src.values[size_t(p)].type.dtype) gv = s_.cast(gv, src.values[size_t(p)].type.dtype, span_);
    results.push_back(s_.materialize(gv, span_));
  }
  s_.fn().results = results;

  s_.set_builder(saved_builder);
  w_ = saved_work;
  span_ = saved_span;
  return g;
}

}  // namespace

int32_t vjp_function(Stager& s, const VjpRequest& request, SourceSpan span) {
  Vjp v(s, span);
  return v.build(request);
}

}  // namespace sg::compiler::staging
