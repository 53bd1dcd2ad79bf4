"""The reduction family of SPEC §7 with §3's dtypes: sum, prod, mean, max, min, any,
all, argmax, argmin, and logsumexp."""

import operator
import warnings

import numpy as np

from . import _dtypes as dt
from . import _kernels
from ._registry import register
from ._tape import differentiable
from ._tensor import Tensor, to_tensor


def _axis(axis):
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return tuple(operator.index(a) for a in axis)
    return operator.index(axis)


def _kernel_axes(axis, ndim):
    """The reduction node's axes (sorted, non-negative; all for None), or None where
    `axis` is out of range or repeated (NumPy's path raises)."""
    axes = range(ndim) if axis is None else axis if isinstance(axis, (tuple, list)) else (axis,)
    try:
        out = sorted(operator.index(a) + (ndim if operator.index(a) < 0 else 0) for a in axes)
    except TypeError:
        return None
    if (out and not 0 <= out[0] <= out[-1] < ndim) or len(set(out)) != len(out):
        return None
    return tuple(out)


def _accumulate_dtype(d):
    """sum/prod/cumsum: bool and i32 -> i64; others keep their dtype."""
    return dt.i64 if d in (dt.bool_, dt.i32) else d


def _reduce(fn, x, axis, keepdims, out_dtype, work_dtype=None, kernel=None):
    t = to_tensor(x, what=fn.__name__)
    a = t._a
    axes = _kernel_axes(axis, a.ndim) if kernel else None
    # max/min of nothing stays NumPy's error.
    if axes is not None and (a.size > 0 or kernel not in ("max", "min")):
        r = _kernels.run(kernel, (a,), (("axes", axes), ("keepdims", int(bool(keepdims)))))
        if r is not None:
            return Tensor(r)
    if work_dtype is not None:
        a = a.astype(work_dtype)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the mean of an empty slice is NaN
        r = fn(a, axis=_axis(axis), keepdims=keepdims)
    return Tensor(np.asarray(r).astype(out_dtype.np, copy=False))


def _float_work(d):
    """The accumulator of sum, prod and mean over d: f32 accumulates in f64 and rounds
    once, as the runtime's kernels do, so that a partial sum or product beyond f32's
    range ([3e38, 3e38, -3e38], [1e-30, 1e-30, 1e30, 1e30]) does not turn the result
    into inf or 0 where the exact one is finite; f16 in f32."""
    return np.float64 if d is dt.f32 else np.float32 if d is dt.f16 else d.np


@differentiable("sum")
def sum(x, axis=None, keepdims=False):  # noqa: A001 - the op library's name
    d = _accumulate_dtype(to_tensor(x, what="sum").dtype)
    return _reduce(np.sum, x, axis, keepdims, d, _float_work(d), "sum")


@differentiable("prod")
def prod(x, axis=None, keepdims=False):
    d = _accumulate_dtype(to_tensor(x, what="prod").dtype)
    return _reduce(np.prod, x, axis, keepdims, d, _float_work(d), "prod")


@differentiable("mean")
def mean(x, axis=None, keepdims=False):
    """Ints and bools give f32; floats keep their dtype."""
    d = to_tensor(x, what="mean").dtype
    out = d if d.is_float else dt.f32
    return _reduce(np.mean, x, axis, keepdims, out, np.float64, "mean")


@differentiable("max")
def max(x, axis=None, keepdims=False):  # noqa: A001
    d = to_tensor(x, what="max").dtype
    return _reduce(np.max, x, axis, keepdims, d, kernel="max")


@differentiable("min")
def min(x, axis=None, keepdims=False):  # noqa: A001
    d = to_tensor(x, what="min").dtype
    return _reduce(np.min, x, axis, keepdims, d, kernel="min")


def any(x, axis=None, keepdims=False):  # noqa: A001
    return _reduce(np.any, x, axis, keepdims, dt.bool_, kernel="any")


def all(x, axis=None, keepdims=False):  # noqa: A001
    return _reduce(np.all, x, axis, keepdims, dt.bool_, kernel="all")


def _arg_reduce(fn, x, axis, keepdims, kernel):
    t = to_tensor(x, what=kernel)
    if isinstance(axis, (tuple, list)):
        raise TypeError(f"{kernel}: axis must be an int or None")
    a = t._a
    # As staged: axis=None is the flattened tensor, kept dims a reshape after.
    flat = a.reshape(-1) if axis is None else a
    axes = _kernel_axes(0 if axis is None else axis, flat.ndim)
    if axes is not None and a.size > 0:
        r = _kernels.run(kernel, (flat,), (("axis", axes[0]), ("keepdims", int(bool(keepdims) and axis is not None))))
        if r is not None:
            return Tensor(r.reshape((1,) * a.ndim) if keepdims and axis is None else r)
    r = fn(a, axis=_axis(axis))
    if keepdims:
        r = np.expand_dims(r, axis) if axis is not None else np.reshape(r, (1,) * a.ndim)
    return Tensor(np.asarray(r, dtype=np.int64))


def argmax(x, axis=None, keepdims=False):
    return _arg_reduce(np.argmax, x, axis, keepdims, "argmax")


def argmin(x, axis=None, keepdims=False):
    return _arg_reduce(np.argmin, x, axis, keepdims, "argmin")


@differentiable("logsumexp")
def logsumexp(x, axis=None, keepdims=False):
    """log(sum(exp(x))) along `axis`, stable: the max is subtracted first (a slice of
    -inf gives -inf, one with +inf gives +inf). Ints and bools give f32; f32
    accumulates in f64 and rounds once, f16 in f32."""
    t = to_tensor(x, what="logsumexp")
    out = t.dtype if t.dtype.is_float else dt.f32
    a = t._a.astype(np.float64 if out is dt.f32 else np.float32)
    ax = _axis(axis)
    with np.errstate(all="ignore"):
        m = np.max(a, axis=ax, keepdims=True, initial=-np.inf)
        m = np.where(np.isfinite(m), m, 0)
        r = np.log(np.sum(np.exp(a - m), axis=ax, keepdims=True)) + m
    if not keepdims:
        r = np.squeeze(r, axis=ax) if ax is not None else r.reshape(())
    return Tensor(np.asarray(r).astype(out.np))


# The ops Tensor's methods and operators call (_registry.py).
register(sum=sum, mean=mean, max=max, min=min, prod=prod, any=any, all=all, argmax=argmax, argmin=argmin)
