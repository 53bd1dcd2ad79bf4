// The rules of reverse mode per op: each op's cotangent inputs from its output's
// (autodiff_internal.h), staged at the forward node's span.
#include "staging/autodiff_internal.h"

namespace sg::compiler::staging::autodiff_detail {
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
    case OpId::CumProd: {
      // dx_i = sum_{j >= i} g_j * prod_{k <= j, k != i} x_k, exact with zeros: before
      // a lane's first zero it is the reverse cumsum of g*y over x; at the first zero
      // the same sum over the products with that zero left out; after it, 0.
      const int64_t axis = at.i(0);
      const size_t n = rank(x);
      std::vector<int64_t> b(n, 0), e(n, 0), st(n, 1), fl(n, 0);
      st[size_t(axis)] = -1;
      ops::Attrs flip;
      flip.values = {ops::AttrValue::Ints(b), ops::AttrValue::Ints(e), ops::AttrValue::Ints(st), ops::AttrValue::Ints(fl)};
      auto rev_cumsum = [&](const Value& v) {
        const Value cs = s_.apply(OpId::CumSum, at, {s_.apply(OpId::Slice, flip, {v}, span_)}, span_);
        return s_.apply(OpId::Slice, flip, {cs}, span_);
      };
      const Value zero = bin(OpId::Equal, x, Value(0.0));
      const Value zeros_so_far = s_.apply(OpId::CumSum, at, {zero}, span_);  // i64
      const Value first_zero = bin(OpId::LogicalAnd, zero, bin(OpId::Equal, zeros_so_far, Value(int64_t(1))));
      const Value before = bin(OpId::Equal, zeros_so_far, Value(int64_t(0)));
      const Value safe_x = where(zero, Value(1.0), x);
      const Value plain = div(rev_cumsum(mul(g, out)), safe_x);
      const Value skip_first = where(first_zero, Value(1.0), x);
      const Value skipped = rev_cumsum(mul(g, s_.apply(OpId::CumProd, at, {skip_first}, span_)));
      const Value at_zero = where(first_zero, skipped, Value(0.0));
      return {where(before, plain, at_zero)};
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
    case OpId::ScatterAdd: case OpId::Scatter: return scatter_rule(node, in, g);
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
      const Value* rule = s_.differentiation().custom_vjp(at.s(2));
      if (rule == nullptr)
        refuse("through custom op '" + at.s(2) + "': declare it with sg.custom_op(..., vjp=...) to make it differentiable");
      Args args;
      args.span = span_;
      const size_t operands = size_t(at.i(3));
      for (size_t k = 0; k < operands; ++k) args.pos.push_back(in[k]);
      args.pos.push_back(out);
      args.pos.push_back(g);
      const Value cts = s_.call_value(*rule, args);
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

// scatter_add (take's gradient, differentiated again: a gather of g) and scatter
// (x[idx] = updates: x keeps g where nothing was written; updates gather g).
Grads Vjp::scatter_rule(const ir::Node& node, const std::vector<Value>& in, const Value& g) {
  ops::Attrs take = node.attrs;
  const Value gu = s_.apply(OpId::Take, std::move(take), {g, in[1]}, span_);
  if (node.op == OpId::ScatterAdd) return {std::nullopt, std::nullopt, gu};
  ops::Attrs keep = node.attrs;
  const Value gx = s_.apply(OpId::Scatter, std::move(keep), {g, in[1], zeros_like(in[2])}, span_);
  return {gx, std::nullopt, gu};
}

Grads Vjp::op_rule(const ir::Node& node) {
  std::vector<Value> in;
  for (int32_t i : node.inputs) in.push_back(fwd(i));
  const Value out = fwd(node.outputs[0]);
  const Value g = ct_or_zeros(node.outputs[0]);
  switch (node.op) {
    case OpId::Add: case OpId::Sub: case OpId::Mul: case OpId::Div: case OpId::Pow: case OpId::Maximum: case OpId::Minimum: case OpId::Neg: case OpId::Abs: case OpId::Exp: case OpId::Log: case OpId::Sqrt: case OpId::Rsqrt: case OpId::Sin: case OpId::Cos: case OpId::Tanh: case OpId::Sigmoid: case OpId::Relu: case OpId::Gelu: case OpId::Square: case OpId::Floor: case OpId::Ceil: case OpId::Round: case OpId::Sign: case OpId::Where: case OpId::Clip: case OpId::Cast:
      return elementwise_rule(node, in, out, g);
    case OpId::Sum: case OpId::Mean: case OpId::Max: case OpId::Min: case OpId::Prod: case OpId::CumSum: case OpId::CumProd: case OpId::Sort: case OpId::TopK: case OpId::Softmax: case OpId::LogSoftmax: case OpId::LayerNorm: case OpId::MatMul:
      return reduction_rule(node, in, out, g);
    case OpId::Reshape: case OpId::BroadcastTo: case OpId::Transpose: case OpId::ExpandDims: case OpId::Squeeze: case OpId::Concatenate: case OpId::Slice: case OpId::SliceUpdate: case OpId::Take: case OpId::Scatter: case OpId::ScatterAdd: case OpId::Tile: case OpId::Pad:
      return shape_rule(node, in, out, g);
    case OpId::Custom: case OpId::Conv2D: case OpId::MaxPool2D: case OpId::AvgPool2D:
      return nn_rule(node, in, out, g);
    case OpId::Inv: case OpId::Solve: case OpId::Slogdet: case OpId::Cholesky: case OpId::TriangularSolve:
    case OpId::Qr: case OpId::Eigh:
      return linalg_rule(node, in, out, g);
    default:
      return Grads(in.size());  // no gradient: comparisons, integer and index ops, creation, random
  }
}

}  // namespace sg::compiler::staging::autodiff_detail
