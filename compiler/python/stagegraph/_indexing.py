"""Boolean selection (SPEC §7): sg.nonzero, sg.where(cond), sg.flatnonzero and
sg.compress, whose result length only the values decide (a dim known at run time
in a compiled graph). Indexing with a tensor or a mask is Tensor.__getitem__."""

import operator

import numpy as np

from . import _elementwise
from ._tensor import Tensor, to_tensor

_MISSING = object()


def flatnonzero(x):
    """The C-order positions (i64) of x's nonzero elements."""
    t = to_tensor(x, what="flatnonzero")
    return Tensor(np.flatnonzero(t._a).astype(np.int64))


def nonzero(x):
    """A tuple of i64 vectors, one per axis: the positions of x's nonzero elements."""
    t = to_tensor(x, what="nonzero")
    if t.ndim == 0:
        raise ValueError("nonzero: a 0-d tensor has no axes to give positions along (NumPy refuses it too); "
                         "use sg.flatnonzero(sg.reshape(x, (1,)))")
    return tuple(Tensor(i.astype(np.int64)) for i in np.nonzero(t._a))


def where(condition, x=_MISSING, y=_MISSING):
    """where(cond, x, y) elementwise; where(cond) alone is nonzero(cond), as NumPy's."""
    if x is _MISSING and y is _MISSING:
        return nonzero(condition)
    if x is _MISSING or y is _MISSING:
        raise TypeError("where: give both x and y, or neither")
    return _elementwise.where(condition, x, y)


def compress(condition, a, axis=None):
    """a's items along `axis` (None: of the flattened a) where the 1-d condition
    is nonzero; a True past the end of the axis is an IndexError, as NumPy's."""
    c = to_tensor(condition, what="compress")
    if c.ndim != 1:
        raise ValueError(f"compress: the condition must be 1-d, got shape {list(c.shape)}; "
                         "select with a boolean index x[mask] or sg.where(mask)")
    t = to_tensor(a, what="compress")
    if axis is None:
        t, axis = t.reshape(-1), 0
    axis = operator.index(axis)
    from ._shape_ops import take  # the gather, differentiable like take
    return take(t, flatnonzero(c), axis=axis)
