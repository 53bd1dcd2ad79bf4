"""Elementwise ops of SPEC §7 with §3's dtypes."""

import math

import numpy as np

from . import _dtypes as dt
from . import _kernels
from ._indexing import nonzero
from ._registry import register
from ._tape import differentiable
from ._tensor import Tensor, coerce, to_tensor

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _float_operand(x, op):
    """The operand as a float array: ints and bools become f32 (§3)."""
    t = to_tensor(x, what=op)
    return t._a if t.dtype.is_float else t._a.astype(np.float32)


def _float_unary(fn, op, kernel=True):
    def apply(x):
        if kernel:
            r = _kernels.run(op, (to_tensor(x, what=op)._a,))
            if r is not None:
                return Tensor(r)
        a = _float_operand(x, op)
        with np.errstate(all="ignore"):
            return Tensor(np.asarray(fn(a), dtype=a.dtype))
    apply.__name__ = op
    apply.__doc__ = f"{op}(x); ints and bools give f32."
    return differentiable(op)(apply)


exp = _float_unary(np.exp, "exp")
log = _float_unary(np.log, "log")
sqrt = _float_unary(np.sqrt, "sqrt")
rsqrt = _float_unary(lambda a: 1 / np.sqrt(a), "rsqrt")
sin = _float_unary(np.sin, "sin")
cos = _float_unary(np.cos, "cos")
tanh = _float_unary(np.tanh, "tanh")


def _sigmoid(a):
    """1 / (1 + e^-x) without exponentiating a large positive number: e^x / (1 + e^x)
    below 0, so that the tail below -88.7 (f16: -11.1) is e^x, not 1 / inf = 0, as
    the runtime's kernels compute it; f16 in f32, rounded once."""
    w = a.astype(np.float32) if a.dtype == np.float16 else a
    e = np.exp(-np.abs(w))
    return np.where(w >= 0, 1 / (1 + e), e / (1 + e))


sigmoid = _float_unary(_sigmoid, "sigmoid")

# Exact gelu (not the tanh approximation), computed in float64.
gelu = _float_unary(lambda a: 0.5 * a.astype(np.float64) * (1 + _erf(a.astype(np.float64) / math.sqrt(2))),
                    "gelu")
# The standard normal CDF, (1 + erf(x/sqrt(2)))/2: gelu's gradient (not in the op library).
normal_cdf = _float_unary(lambda a: 0.5 * (1 + _erf(a.astype(np.float64) / math.sqrt(2))), "normal_cdf",
                          kernel=False)


def _same_dtype_unary(fn, op, int_identity=False):
    def apply(x):
        t = to_tensor(x, what=op)
        if t.dtype is dt.bool_:
            raise TypeError(f"{op}: not defined for bool; cast with astype")
        if int_identity and not t.dtype.is_float:
            return Tensor(t._a.copy())
        r = _kernels.run(op, (t._a,))
        if r is not None:
            return Tensor(r)
        with np.errstate(all="ignore"):
            return Tensor(np.asarray(fn(t._a)).astype(t._a.dtype, copy=False))
    apply.__name__ = op
    apply.__doc__ = f"{op}(x), in x's dtype."
    return differentiable(op)(apply)


abs = _same_dtype_unary(np.abs, "abs")  # noqa: A001 - the op library's name
floor = _same_dtype_unary(np.floor, "floor", int_identity=True)
ceil = _same_dtype_unary(np.ceil, "ceil", int_identity=True)
round = _same_dtype_unary(np.rint, "round", int_identity=True)  # noqa: A001 - half to even
sign = _same_dtype_unary(np.sign, "sign")
square = _same_dtype_unary(np.square, "square")


@differentiable("relu")
def relu(x):
    """max(x, 0) in x's dtype."""
    t = to_tensor(x, what="relu")
    if t.dtype is dt.bool_:
        raise TypeError("relu: not defined for bool; cast with astype")
    r = _kernels.run("relu", (t._a,))
    if r is not None:
        return Tensor(r)
    return Tensor(np.maximum(t._a, np.zeros((), t._a.dtype)))


@differentiable("maximum")
def maximum(a, b):
    (x, y), d = coerce("maximum", a, b)
    r = _kernels.run("maximum", (x, y))
    if r is not None:
        return Tensor(r)
    return Tensor(np.asarray(np.maximum(x, y), dtype=d.np))


@differentiable("minimum")
def minimum(a, b):
    (x, y), d = coerce("minimum", a, b)
    r = _kernels.run("minimum", (x, y))
    if r is not None:
        return Tensor(r)
    return Tensor(np.asarray(np.minimum(x, y), dtype=d.np))


@differentiable("where")
def _where(cond, a, b):
    c = to_tensor(cond, what="where")
    if c.dtype is not dt.bool_:
        raise TypeError(f"where: the condition must be bool, not {c.dtype.name}")
    (x, y), d = coerce("where", a, b)
    r = _kernels.run("where", (c._a, x, y))
    if r is not None:
        return Tensor(r)
    return Tensor(np.asarray(np.where(c._a, x, y), dtype=d.np))


_MISSING = object()


def where(condition, x=_MISSING, y=_MISSING):
    """where(cond, x, y) elementwise; where(cond) alone is nonzero(cond), as NumPy's."""
    if x is _MISSING and y is _MISSING:
        return nonzero(condition)
    if x is _MISSING or y is _MISSING:
        raise TypeError("where: give both x and y, or neither")
    return _where(condition, x, y)


@differentiable("clip")
def clip(x, lo=None, hi=None):
    """min(max(x, lo), hi); a bound of None is absent. NaN stays NaN."""
    operands = [v for v in (x, lo, hi) if v is not None]
    arrays, d = coerce("clip", *operands)
    if d is dt.bool_:
        raise TypeError("clip: not defined for bool; cast with astype")
    # As the compiler stages it: one bound is maximum or minimum, two are clip.
    kernel = "clip" if len(arrays) == 3 else "maximum" if lo is not None else "minimum"
    r = _kernels.run(kernel, tuple(arrays))
    if r is not None:
        return Tensor(r)
    out = arrays[0]
    rest = iter(arrays[1:])
    with np.errstate(all="ignore"):
        if lo is not None:
            out = np.maximum(out, next(rest))
        if hi is not None:
            out = np.minimum(out, next(rest))
    return Tensor(np.asarray(out, dtype=d.np))


def _logical(fn, op):
    def apply(*args):
        arrays = [to_tensor(v, what=op)._a for v in args]
        if all(a.dtype == np.bool_ for a in arrays):
            r = _kernels.run(op, tuple(arrays))
            if r is not None:
                return Tensor(r)
        return Tensor(np.asarray(fn(*arrays)))
    apply.__name__ = op
    return apply


logical_and = _logical(np.logical_and, "logical_and")
logical_or = _logical(np.logical_or, "logical_or")
logical_not = _logical(np.logical_not, "logical_not")


def isnan(x):
    t = to_tensor(x, what="isnan")
    if not t.dtype.is_float:
        return Tensor(np.zeros(t._a.shape, np.bool_))
    r = _kernels.run("isnan", (t._a,))
    if r is not None:
        return Tensor(r)
    return Tensor(np.asarray(np.isnan(t._a)))


# The ops Tensor's methods and operators call (_registry.py).
register(abs=abs, clip=clip, round=round)
