"""Neural-network ops of SPEC §7. Layouts: NHWC activations, HWIO filters.

Convolutions and normalizations accumulate in float64 and round once to the
result dtype, so the eager result is the accurate reference the runtime's
kernels are compared with.
"""

import operator

import numpy as np

from . import _dtypes as dt
from . import _kernels
from ._tape import differentiable
from ._tensor import Tensor, to_tensor


def _float_array(x, op):
    t = to_tensor(x, what=op)
    return t._a if t.dtype.is_float else t._a.astype(np.float32)


def _empty_normalized(a, axis):
    """softmax and log_softmax of a tensor without elements: an empty result of the
    same shape (NumPy's max would refuse an empty axis; there is nothing to divide)."""
    np.sum(a, axis=axis)  # an axis out of range is still an error
    return Tensor(a.copy())


@differentiable("softmax")
def softmax(x, axis=-1):
    a = _float_array(x, "softmax")
    if a.size == 0:
        return _empty_normalized(a, axis)
    r = _normalize_kernel("softmax", a, axis)
    if r is not None:
        return Tensor(r)
    w = a.astype(np.float32) if a.dtype == np.float16 else a
    with np.errstate(all="ignore"):
        e = np.exp(w - np.max(w, axis=axis, keepdims=True))
        return Tensor((e / np.sum(e, axis=axis, keepdims=True)).astype(a.dtype))


def _normalize_kernel(op, a, axis):
    """softmax or log_softmax on the runtime's kernels along one int axis, as staged
    (None over a 1-d tensor); None where NumPy computes it."""
    if axis is None and a.ndim == 1:
        axis = 0
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -a.ndim <= axis < a.ndim:
        return None
    return _kernels.run(op, (a,), (("axis", int(axis) % a.ndim),))


@differentiable("log_softmax")
def log_softmax(x, axis=-1):
    a = _float_array(x, "log_softmax")
    if a.size == 0:
        return _empty_normalized(a, axis)
    r = _normalize_kernel("log_softmax", a, axis)
    if r is not None:
        return Tensor(r)
    w = a.astype(np.float32) if a.dtype == np.float16 else a
    with np.errstate(all="ignore"):
        s = w - np.max(w, axis=axis, keepdims=True)
        return Tensor((s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))).astype(a.dtype))


@differentiable("layer_norm")
def layer_norm(x, gamma, beta, eps=1e-5):
    """(x - mean) / sqrt(var + eps) * gamma + beta over the last axis (biased variance)."""
    t = to_tensor(x, what="layer_norm")
    if not t.dtype.is_float:
        raise TypeError(f"layer_norm: x must be f32 or f16, not {t.dtype.name}")
    g, b = to_tensor(gamma, like=t, what="layer_norm"), to_tensor(beta, like=t, what="layer_norm")
    for name, p in (("gamma", g), ("beta", b)):
        if p.dtype is not t.dtype:
            raise TypeError(f"layer_norm: {name} is {p.dtype.name} but x is {t.dtype.name}; cast with astype")
    if t.ndim == 0:
        raise ValueError("layer_norm: x needs at least one dim")
    if g.ndim <= 1 and b.ndim <= 1:  # else staged op by op
        r = _kernels.run("layer_norm", (t._a, g._a, b._a), (("eps", float(eps)),))
        if r is not None:
            return Tensor(r)
    a = t._a.astype(np.float64)
    mu = a.mean(axis=-1, keepdims=True)
    var = ((a - mu) ** 2).mean(axis=-1, keepdims=True)
    with np.errstate(all="ignore"):
        y = (a - mu) / np.sqrt(var + float(eps)) * g._a.astype(np.float64) + b._a.astype(np.float64)
    return Tensor(y.astype(t._a.dtype))


def _pair(v, name, op):
    if isinstance(v, (tuple, list)):
        if len(v) != 2:
            raise ValueError(f"{op}: {name} must be an int or a pair, got {v!r}")
        p = (operator.index(v[0]), operator.index(v[1]))
    else:
        p = (operator.index(v),) * 2
    if p[0] < 1 or p[1] < 1:
        raise ValueError(f"{op}: {name} must be >= 1, got {v!r}")
    return p


def _padding(in_size, k, stride, dilation, padding, op):
    """(out, pad_before, pad_after) for one spatial dim (TensorFlow's SAME rule)."""
    span = (k - 1) * dilation + 1
    mode = padding.upper() if isinstance(padding, str) else None
    if mode == "SAME":
        out = -(-in_size // stride)
        total = max((out - 1) * stride + span - in_size, 0)
        return out, total // 2, total - total // 2
    if mode == "VALID":
        if in_size < span:
            raise ValueError(f"{op}: a window of {span} does not fit in an input of {in_size} (VALID padding)")
        return (in_size - span) // stride + 1, 0, 0
    raise ValueError(f"{op}: padding must be 'VALID' or 'SAME', not {padding!r}")


class _Taps:
    """The geometry of a window over an NHWC input of `shape`: the padding
    ((top, bottom), (left, right)), the output's (OH, OW), and for every tap (i, j)
    the slice of the padded input it reads for all outputs."""

    def __init__(self, shape, k, stride, dilation, padding, op):
        if len(shape) != 4:
            raise ValueError(f"{op}: the input must be NHWC (rank 4), got shape {list(shape)}")
        oh, top, bottom = _padding(shape[1], k[0], stride[0], dilation[0], padding, op)
        ow, left, right = _padding(shape[2], k[1], stride[1], dilation[1], padding, op)
        self.shape, self.out_hw = tuple(shape), (oh, ow)
        self.pads = ((0, 0), (top, bottom), (left, right), (0, 0))
        self.padded = (shape[0], shape[1] + top + bottom, shape[2] + left + right, shape[3])
        self.inside = (slice(None), slice(top, top + shape[1]), slice(left, left + shape[2]), slice(None))
        self.taps = [(i, j, (slice(None), slice(i * dilation[0], i * dilation[0] + (oh - 1) * stride[0] + 1, stride[0]),
                             slice(j * dilation[1], j * dilation[1] + (ow - 1) * stride[1] + 1, stride[1]),
                             slice(None)))
                     for i in range(k[0]) for j in range(k[1])]

    def pad(self, a, fill=0):
        return np.pad(a, self.pads, constant_values=fill)

    def scatter(self, parts, dtype):
        """The input-shaped sum of tap-shaped `parts` (a function of the tap index)."""
        out = np.zeros(self.padded, dtype)
        for t, (_, _, where) in enumerate(self.taps):
            out[where] += parts(t)
        return out[self.inside]


def _windows(a, k, stride, dilation, padding, op, fill):
    """Yields (i, j, patch) for every filter tap: patch is [N, OH, OW, C]."""
    taps = _Taps(a.shape, k, stride, dilation, padding, op)
    ap = taps.pad(a, fill)
    for i, j, where in taps.taps:
        yield i, j, ap[where]


@differentiable("conv2d")
def conv2d(x, w, stride=1, padding="VALID", dilation=1, groups=1):
    """Cross-correlation of x [N, H, W, Cin] with w [KH, KW, Cin/groups, Cout]."""
    xt, wt = to_tensor(x, what="conv2d"), to_tensor(w, what="conv2d")
    if xt.dtype is not wt.dtype:
        raise TypeError(f"conv2d: x is {xt.dtype.name} but the filter is {wt.dtype.name}; cast with astype")
    if wt.ndim != 4:
        raise ValueError(f"conv2d: the filter must be HWIO (rank 4), got shape {list(wt.shape)}")
    groups = operator.index(groups)
    kh, kw, cin_g, cout = wt.shape
    if groups < 1 or cout % groups:
        raise ValueError(f"conv2d: {cout} output channels do not divide into {groups} groups")
    if xt.ndim != 4 or xt.shape[3] != cin_g * groups:
        raise ValueError(f"conv2d: input {list(xt.shape)} does not have {cin_g * groups} channels "
                         f"(filter {list(wt.shape)}, groups={groups})")
    stride, dilation = _pair(stride, "stride", "conv2d"), _pair(dilation, "dilation", "conv2d")
    if groups == 1 and xt.dtype is dt.f32:
        from ._staging import quantized_weight
        quant = quantized_weight(w)
        if quant is not None and quant[0] == "int8":  # int4 filters: f32 over the dequantized values
            return Tensor(_dynamic_conv2d(xt._a, quant, wt._a, stride, dilation, padding))
    work = np.float64 if xt.dtype.is_float else np.int64
    a, f = xt._a.astype(work), wt._a.astype(work)
    fg = f.reshape(kh, kw, cin_g, groups, cout // groups)
    out = None
    for i, j, patch in _windows(a, (kh, kw), stride, dilation, padding, "conv2d", 0):
        n, oh, ow, _ = patch.shape
        term = np.einsum("nhwgc,cgo->nhwgo", patch.reshape(n, oh, ow, groups, cin_g), fg[i, j])
        out = term if out is None else out + term
    n, oh, ow = out.shape[:3]
    with np.errstate(all="ignore"):
        return Tensor(out.reshape(n, oh, ow, cout).astype(xt._a.dtype))


def _dynamic_conv2d(a, quant, wide, stride, dilation, padding):
    """conv2d with an int8 filter (sg.weight(name, quantize="int8")) as the
    runtime computes it (SPEC §13): each image of the input quantized to int8 once
    (one scale per image), each output position's patch of those integers (the
    window's pixels in HWIO order, 0 outside the image) a row of a dense product
    with the filter read as [KH*KW*Cin, Cout]. An image holding NaN or inf is
    computed in f32 over the dequantized filter."""
    from ._quantize import quantize_rows, quantized_product
    storage, q, scale = quant
    kh, kw, cin, cout = wide.shape
    a = np.asarray(a, np.float32)
    n = a.shape[0]
    qi, sa, finite = quantize_rows(a.reshape(n, -1))

    def patches(img):
        taps = [t for _, _, t in _windows(img, (kh, kw), stride, dilation, padding, "conv2d", 0)]
        p = np.stack(taps, axis=3)
        return p.reshape(-1, kh * kw * cin), p.shape[1:3]

    rows, (oh, ow) = patches(qi.reshape(a.shape))
    wq, s = q.reshape(kh * kw * cin, cout), scale.reshape(1, cout)
    out = quantized_product(rows, np.repeat(sa, oh * ow), storage, wq, s).reshape(n, oh, ow, cout)
    for i in np.flatnonzero(~finite):
        f32_rows, _ = patches(a[i:i + 1])
        with np.errstate(all="ignore"):
            f32 = f32_rows.astype(np.float64) @ wide.reshape(kh * kw * cin, cout).astype(np.float64)
        out[i] = f32.astype(np.float32).reshape(oh, ow, cout)
    return out


def _conv_args(w_shape, stride, dilation, groups):
    kh, kw, cin_g, cout = w_shape
    groups = operator.index(groups)
    return (kh, kw), cin_g, cout // groups, groups, _pair(stride, "stride", "conv2d"), \
        _pair(dilation, "dilation", "conv2d")


@differentiable("conv2d_input_grad")
def conv2d_input_grad(g, w, x_shape, stride=1, padding="VALID", dilation=1, groups=1):
    """The gradient of conv2d(x, w) with respect to x [N, H, W, Cin] of `x_shape`,
    given the result's cotangent g (a transposed convolution), in g's dtype."""
    w = to_tensor(w, what="conv2d")
    k, cin_g, cout_g, groups, stride, dilation = _conv_args(w.shape, stride, dilation, groups)
    taps = _Taps(x_shape, k, stride, dilation, padding, "conv2d")
    n, oh, ow = g.shape[:3]
    gg = g._a.astype(np.float64).reshape(n, oh, ow, groups, cout_g)
    fg = w._a.astype(np.float64).reshape(k[0], k[1], cin_g, groups, cout_g)
    dx = taps.scatter(lambda t: np.einsum("nhwgo,cgo->nhwgc", gg, fg[taps.taps[t][0], taps.taps[t][1]])
                      .reshape(n, oh, ow, groups * cin_g), np.float64)
    return Tensor(dx.astype(g._a.dtype))


@differentiable("conv2d_filter_grad")
def conv2d_filter_grad(x, g, w_shape, stride=1, padding="VALID", dilation=1, groups=1):
    """The gradient of conv2d(x, w) with respect to the filter w of `w_shape`, given
    the result's cotangent g, in g's dtype."""
    x = to_tensor(x, what="conv2d")
    k, cin_g, cout_g, groups, stride, dilation = _conv_args(w_shape, stride, dilation, groups)
    n, oh, ow = g.shape[:3]
    gg = g._a.astype(np.float64).reshape(n, oh, ow, groups, cout_g)
    dw = np.zeros((k[0], k[1], cin_g, groups, cout_g))
    for i, j, patch in _windows(x._a.astype(np.float64), k, stride, dilation, padding, "conv2d", 0):
        dw[i, j] = np.einsum("nhwgc,nhwgo->cgo", patch.reshape(n, oh, ow, groups, cin_g), gg)
    return Tensor(dw.reshape(w_shape).astype(g._a.dtype))


def _pool_args(size, stride, op):
    size = _pair(size, "size", op)
    return size, size if stride is None else _pair(stride, "stride", op)


@differentiable("max_pool2d")
def max_pool2d(x, size, stride=None, padding="VALID"):
    t = to_tensor(x, what="max_pool2d")
    size, stride = _pool_args(size, stride, "max_pool2d")
    a = t._a
    fill = -np.inf if t.dtype.is_float else (False if t.dtype is dt.bool_ else np.iinfo(a.dtype).min)
    out = None
    for _, _, patch in _windows(a, size, stride, (1, 1), padding, "max_pool2d", fill):
        out = patch.copy() if out is None else np.maximum(out, patch)
    return Tensor(out)


@differentiable("avg_pool2d")
def avg_pool2d(x, size, stride=None, padding="VALID"):
    """The mean of the cells inside the input (padding not counted). Ints give f32."""
    t = to_tensor(x, what="avg_pool2d")
    size, stride = _pool_args(size, stride, "avg_pool2d")
    a = t._a.astype(np.float64)
    ones = np.ones((1,) + a.shape[1:3] + (1,), np.float64)
    total = count = None
    for (_, _, patch), (_, _, cells) in zip(_windows(a, size, stride, (1, 1), padding, "avg_pool2d", 0),
                                            _windows(ones, size, stride, (1, 1), padding, "avg_pool2d", 0)):
        total = patch.copy() if total is None else total + patch
        count = cells.copy() if count is None else count + cells
    out_dtype = t._a.dtype if t.dtype.is_float else np.float32
    return Tensor((total / count).astype(out_dtype))


def _max_choice(x, size, stride, padding):
    """The taps and, for every output, the index of the tap max_pool2d takes: the
    first maximal cell of the window in row-major order."""
    size, stride = _pool_args(size, stride, "max_pool2d")
    taps = _Taps(x.shape, size, stride, (1, 1), padding, "max_pool2d")
    ap = taps.pad(x._a, -np.inf)
    best = choice = None
    for t, (_, _, where) in enumerate(taps.taps):
        patch = ap[where]
        if best is None:
            best, choice = patch, np.zeros(patch.shape, np.int64)
        else:
            better = patch > best
            best, choice = np.where(better, patch, best), np.where(better, t, choice)
    return taps, choice


@differentiable("max_pool2d_grad")
def max_pool2d_grad(x, g, size, stride=None, padding="VALID"):
    """The gradient of max_pool2d(x) given its cotangent g: each window's g goes to
    its first maximal cell (row-major), as XLA's select-and-scatter gives it."""
    taps, choice = _max_choice(x, size, stride, padding)
    ga = g._a
    return Tensor(taps.scatter(lambda t: np.where(choice == t, ga, 0), ga.dtype))


@differentiable("max_pool2d_select")
def max_pool2d_select(x, c, size, stride=None, padding="VALID"):
    """c (x's shape) read at the cell max_pool2d takes of each window of x."""
    taps, choice = _max_choice(x, size, stride, padding)
    cp = taps.pad(c._a)
    out = np.zeros(choice.shape, c._a.dtype)
    for t, (_, _, where) in enumerate(taps.taps):
        out += np.where(choice == t, cp[where], 0)
    return Tensor(out)


@differentiable("avg_pool2d_grad")
def avg_pool2d_grad(g, x_shape, size, stride=None, padding="VALID"):
    """The gradient of avg_pool2d(x) for x of `x_shape` given its cotangent g."""
    size, stride = _pool_args(size, stride, "avg_pool2d")
    taps = _Taps(x_shape, size, stride, (1, 1), padding, "avg_pool2d")
    ones = taps.pad(np.ones((1,) + tuple(x_shape[1:3]) + (1,)))
    count = sum(ones[where] for _, _, where in taps.taps)
    share = g._a.astype(np.float64) / count
    return Tensor(taps.scatter(lambda t: share, np.float64).astype(g._a.dtype))

