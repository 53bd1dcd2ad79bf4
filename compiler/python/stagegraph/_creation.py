"""The creation family of SPEC §7: zeros ones full eye, *_like, arange, one_hot."""

import operator

import numpy as np

from . import _dtypes as dt
from ._shape import _shape_arg
from ._tensor import Tensor, scalar_to_array, to_tensor


def zeros(shape, dtype=dt.f32):
    return Tensor(np.zeros(_shape_arg(shape, "zeros"), dt.resolve(dtype).np))


def ones(shape, dtype=dt.f32):
    return Tensor(np.ones(_shape_arg(shape, "ones"), dt.resolve(dtype).np))


def _fill_value(value, d, op):
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ValueError(f"{op}: the fill value must be a scalar, got shape {list(value.shape)}")
        with np.errstate(all="ignore"):
            return value._a.astype(d.np)
    if isinstance(value, float) and not d.is_float:
        raise TypeError(f"{op}: a float fill value for a {d.name} tensor; pass dtype=sg.f32 or an int")
    return scalar_to_array(value, d)


def full(shape, value, dtype=dt.f32):
    d = dt.resolve(dtype)
    return Tensor(np.full(_shape_arg(shape, "full"), _fill_value(value, d, "full"), d.np))


def eye(n, m=None, k=0, dtype=dt.f32):
    return Tensor(np.eye(int(n), None if m is None else int(m), int(k), dtype=dt.resolve(dtype).np))


def zeros_like(x, dtype=None):
    t = to_tensor(x, what="zeros_like")
    return Tensor(np.zeros(t._a.shape, (dt.resolve(dtype) if dtype is not None else t.dtype).np))


def ones_like(x, dtype=None):
    t = to_tensor(x, what="ones_like")
    return Tensor(np.ones(t._a.shape, (dt.resolve(dtype) if dtype is not None else t.dtype).np))


def full_like(x, value, dtype=None):
    t = to_tensor(x, what="full_like")
    d = dt.resolve(dtype) if dtype is not None else t.dtype
    return Tensor(np.full(t._a.shape, _fill_value(value, d, "full_like"), d.np))


def _number(v):
    if isinstance(v, Tensor):
        if v.ndim != 0:
            raise ValueError(f"arange: bounds must be scalars, got shape {list(v.shape)}")
        return float(v) if v.dtype.is_float else int(v)
    if isinstance(v, (bool, int, float, np.integer, np.floating)):
        return v
    raise TypeError(f"arange: bounds must be numbers, not {type(v).__name__}")


def arange(start, stop=None, step=None, dtype=None):
    """i64 when every bound is an int, f32 when one is a float (or `dtype`)."""
    args = [_number(v) for v in (start, stop, step) if v is not None]
    if stop is None:
        args = [0] + args
    if len(args) == 2:
        args.append(1)
    begin, end, inc = args
    if inc == 0:
        raise ValueError("arange: step must not be 0")
    if dtype is not None:
        d = dt.resolve(dtype)
    else:
        d = dt.f32 if any(isinstance(v, (float, np.floating)) for v in args) else dt.i64
    if d.is_float and any(isinstance(v, Tensor) and v.dtype.is_float for v in (start, stop, step)):
        # A float tensor bound (staged, when compiled) makes the length NumPy's count
        # with its scalars: ceil((stop - start) / step) in the result's dtype, the
        # bounds cast to it, as the compiled graph computes it. 0.3 / 0.1 is 3 in f32
        # (3 elements) but 3.0000000745 with the same bounds in f64 (4 elements).
        b, e, s = (np.asarray(v, dtype=d.np) for v in (begin, end, inc))
        with np.errstate(all="ignore"):
            count = np.ceil((e - b) / s)
        if not np.isfinite(count):
            raise ValueError("arange: cannot compute the length (a bound is NaN or infinite)")
        r = float(b) + np.arange(max(int(count), 0), dtype=np.float64) * float(s)
    elif d.is_float:
        r = np.arange(float(begin), float(end), float(inc), dtype=np.float64)
    else:
        r = np.arange(begin, end, inc, dtype=np.int64)
    return Tensor(r.astype(d.np))


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
