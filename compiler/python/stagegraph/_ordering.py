"""The ordering family of SPEC §7 with §3's dtypes, along one axis: cumsum, cumprod,
sort, argsort, topk, and searchsorted."""

import operator

import numpy as np

from . import _dtypes as dt
from . import _kernels
from ._indexing import take
from ._reduction import _accumulate_dtype, _axis, _kernel_axes
from ._registry import register
from ._tape import differentiable
from ._tensor import Tensor, to_tensor


@differentiable("cumsum")
def cumsum(x, axis=None):
    t = to_tensor(x, what="cumsum")
    d = _accumulate_dtype(t.dtype)
    flat = t._a.reshape(-1) if axis is None else t._a
    axes = _kernel_axes(0 if axis is None else axis, flat.ndim)
    if axes is not None:
        r = _kernels.run("cumsum", (flat,), (("axis", axes[0]),))
        if r is not None:
            return Tensor(r)
    with np.errstate(all="ignore"):
        r = np.cumsum(t._a, axis=_axis(axis), dtype=np.float32 if d is dt.f16 else d.np)
    return Tensor(r.astype(d.np, copy=False))


@differentiable("sort")
def sort(x, axis=-1):
    t = to_tensor(x, what="sort")
    return Tensor(np.sort(t._a, axis=_axis(axis), kind="stable"))


def argsort(x, axis=-1):
    """Stable: equal values keep their order. Indices are i64."""
    t = to_tensor(x, what="argsort")
    return Tensor(np.argsort(t._a, axis=_axis(axis), kind="stable").astype(np.int64))


@differentiable("topk")
def topk(x, k, axis=-1):
    """(values, indices) of the k largest along `axis`, largest first, ties by lower index."""
    t = to_tensor(x, what="topk")
    a = t._a
    if a.ndim == 0:
        raise ValueError("topk: needs at least one dim")
    axis = operator.index(axis)
    k = operator.index(k)
    n = a.shape[axis]
    if not 0 <= k <= n:
        raise ValueError(f"topk: k={k} is outside [0, {n}] for axis {axis} of shape {list(a.shape)}")
    # A stable ascending sort of a decreasing key gives largest first with ties in
    # index order; ~v is decreasing for ints and never overflows, unlike -v.
    if t.dtype.is_float:
        # NaN counts as the largest value (as in argmax), above +inf: the first key
        # puts NaNs first, the second orders the rest.
        nan = np.isnan(a)
        order = np.lexsort((np.where(nan, 0.0, -a.astype(np.float64)), ~nan), axis=axis)
    else:
        key = ~a.astype(np.int8) if t.dtype is dt.bool_ else ~a
        order = np.argsort(key, axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis)
    return Tensor(np.take_along_axis(a, idx, axis=axis)), Tensor(idx.astype(np.int64))


@differentiable("cumprod")
def cumprod(x, axis=None):
    """Running products along `axis` (None: the flattened tensor); bool and i32 give i64."""
    t = to_tensor(x, what="cumprod")
    d = dt.i64 if t.dtype in (dt.bool_, dt.i32) else t.dtype
    flat = t._a.reshape(-1) if axis is None else t._a
    if flat.ndim == 0:
        raise ValueError("cumprod: needs a tensor of rank 1 or more (or axis=None)")
    axes = _kernel_axes(0 if axis is None else axis, flat.ndim)
    if axes is None:
        raise ValueError(f"cumprod: axis {axis} is out of range for shape {list(t.shape)}")
    r = _kernels.run("cumprod", (flat,), (("axis", axes[0]),))
    if r is not None:
        return Tensor(r)
    with np.errstate(all="ignore"):
        r = np.cumprod(flat, axis=axes[0], dtype=np.float32 if d is dt.f16 else d.np)
    return Tensor(r.astype(d.np, copy=False))


def searchsorted(a, v, side="left", sorter=None):
    """Positions (i64) where the values `v` go in the sorted 1-D `a` to keep it
    sorted: side='left' the first such position, 'right' the last. NaN sorts last."""
    s = to_tensor(a, what="searchsorted")
    if sorter is not None:
        s = take(s, sorter)
    x = to_tensor(v, like=s, what="searchsorted")
    if side not in ("left", "right"):
        raise ValueError("searchsorted: side must be 'left' or 'right'")
    if s.ndim != 1:
        raise ValueError(f"searchsorted: the sorted sequence must be 1-D, got {list(s.shape)}")
    if s.dtype is not x.dtype:
        raise TypeError(f"searchsorted: the values are {x.dtype.name} and the sequence {s.dtype.name}; "
                        "cast with astype")
    r = _kernels.run("searchsorted", (s._a, x._a), (("right", int(side == "right")),))
    if r is not None:
        return Tensor(r)
    return Tensor(np.asarray(np.searchsorted(s._a, x._a, side=side)).astype(np.int64))


# The ops Tensor's methods call (_registry.py): x.cumsum(axis), x.cumprod(axis).
register(cumsum=cumsum, cumprod=cumprod)
