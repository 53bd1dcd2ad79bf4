"""Neural-network ops of SPEC §7. Layouts: NHWC activations, HWIO filters.

Convolutions and normalizations accumulate in float64 and round once to the
result dtype, so the eager result is the accurate reference the runtime's
kernels are compared with.
"""

import operator

import numpy as np

from . import _dtypes as dt
from ._tensor import Tensor, to_tensor


def _float_array(x, op):
    t = to_tensor(x, what=op)
    return t._a if t.dtype.is_float else t._a.astype(np.float32)


def _empty_normalized(a, axis):
    """softmax and log_softmax of a tensor without elements: an empty result of the
    same shape (NumPy's max would refuse an empty axis; there is nothing to divide)."""
    np.sum(a, axis=axis)  # an axis out of range is still an error
    return Tensor(a.copy())


def softmax(x, axis=-1):
    a = _float_array(x, "softmax")
    if a.size == 0:
        return _empty_normalized(a, axis)
    w = a.astype(np.float32) if a.dtype == np.float16 else a
    with np.errstate(all="ignore"):
        e = np.exp(w - np.max(w, axis=axis, keepdims=True))
        return Tensor((e / np.sum(e, axis=axis, keepdims=True)).astype(a.dtype))


def log_softmax(x, axis=-1):
    a = _float_array(x, "log_softmax")
    if a.size == 0:
        return _empty_normalized(a, axis)
    w = a.astype(np.float32) if a.dtype == np.float16 else a
    with np.errstate(all="ignore"):
        s = w - np.max(w, axis=axis, keepdims=True)
        return Tensor((s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))).astype(a.dtype))


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


def _windows(a, k, stride, dilation, padding, op, fill):
    """Yields (i, j, patch) for every filter tap: patch is [N, OH, OW, C]."""
    if a.ndim != 4:
        raise ValueError(f"{op}: the input must be NHWC (rank 4), got shape {list(a.shape)}")
    oh, top, bottom = _padding(a.shape[1], k[0], stride[0], dilation[0], padding, op)
    ow, left, right = _padding(a.shape[2], k[1], stride[1], dilation[1], padding, op)
    ap = np.pad(a, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=fill)
    for i in range(k[0]):
        for j in range(k[1]):
            r0, c0 = i * dilation[0], j * dilation[1]
            yield i, j, ap[:, r0:r0 + (oh - 1) * stride[0] + 1:stride[0],
                           c0:c0 + (ow - 1) * stride[1] + 1:stride[1], :]


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


def _pool_args(size, stride, op):
    size = _pair(size, "size", op)
    return size, size if stride is None else _pair(stride, "stride", op)


def max_pool2d(x, size, stride=None, padding="VALID"):
    t = to_tensor(x, what="max_pool2d")
    size, stride = _pool_args(size, stride, "max_pool2d")
    a = t._a
    fill = -np.inf if t.dtype.is_float else (False if t.dtype is dt.bool_ else np.iinfo(a.dtype).min)
    out = None
    for _, _, patch in _windows(a, size, stride, (1, 1), padding, "max_pool2d", fill):
        out = patch.copy() if out is None else np.maximum(out, patch)
    return Tensor(out)


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


def one_hot(idx, depth, dtype=dt.f32):
    """[..., depth] with 1 where the index equals the position; indices outside
    [0, depth) give all-zero rows."""
    i = to_tensor(idx, what="one_hot")
    if not i.dtype.is_int:
        raise TypeError(f"one_hot: indices must be i32 or i64, not {i.dtype.name}")
    depth = operator.index(depth)
    if depth < 0:
        raise ValueError(f"one_hot: depth must be >= 0, got {depth}")
    d = dt.resolve(dtype)
    hot = i._a[..., None] == np.arange(depth, dtype=np.int64)
    return Tensor(hot.astype(d.np))
